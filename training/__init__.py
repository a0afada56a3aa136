"""Training, curation and evaluation: one config dataclass + run(config, reporter) per job kind.
No Django."""
