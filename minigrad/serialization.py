"""`mg.save` / `mg.load` in safetensors (being written)."""

from typing import Any


def save(state_dict: dict[str, Any], path: str, metadata: dict[str, str] | None = None) -> None:
    raise NotImplementedError("mg.save is being written")


def load(path: str, device: Any = None) -> dict[str, Any]:
    raise NotImplementedError("mg.load is being written")
