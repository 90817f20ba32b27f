// The site's search: plain substring matching over window.SEARCH_INDEX (search-index.js, loaded as a script, so
// it works from file:// too). Chinese needs no word splitting this way: every query term must occur in a section.
(function () {
  "use strict";
  const box = document.getElementById("search"), list = document.getElementById("results");
  const sections = (window.SEARCH_INDEX || []).map(s => ({...s, hay: (s.t + "\n" + s.x).toLowerCase()}));

  function snippet(text, term) {
    const at = text.toLowerCase().indexOf(term);
    const start = Math.max(0, at - 30);
    return (start > 0 ? "…" : "") + text.slice(start, at + term.length + 50).replace(/\s+/g, " ") + "…";
  }

  function search() {
    const terms = box.value.trim().toLowerCase().split(/\s+/).filter(Boolean);
    list.replaceChildren();
    if (!terms.length) return;
    const hits = sections.filter(s => terms.every(t => s.hay.includes(t)));
    for (const s of hits.slice(0, 40)) {
      const item = document.createElement("li"), link = document.createElement("a"), more = document.createElement("span");
      link.href = s.p + (s.a === "top" ? "" : "#" + s.a);
      link.textContent = s.t;
      more.className = "snippet";
      more.textContent = snippet(s.x, terms[0]);
      item.append(link, more);
      list.append(item);
    }
    if (!hits.length) list.append(Object.assign(document.createElement("li"), {textContent: "没有找到"}));
  }

  if (box) box.addEventListener("input", search);
})();
