"""Reading raw inputs and writing outputs atomically."""

from curation.io.atomic import atomic_open, atomic_path, write_json, write_text

__all__ = ["atomic_open", "atomic_path", "write_json", "write_text"]
