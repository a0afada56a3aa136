"""Word curation: candidate nouns -> versioned, difficulty-rated train/val/test splits."""

from training.curation.config import CurationConfig
from training.curation.runner import CurationResult, Inputs, run

__all__ = ["CurationConfig", "CurationResult", "Inputs", "run"]
