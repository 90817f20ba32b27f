"""The course's CJK font: NotoSansCJKsc-Course.otf (a subset of Noto Sans CJK SC, SIL OFL 1.1: LICENSE).

tutorials/course.py registers it with matplotlib; the site (tutorials/site/) serves it to the browser.
make_subset.py rebuilds it from the course's text. Read next: make_subset.py.
"""
