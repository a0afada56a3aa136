"""The parts of `python -m bench.compute` (issue 43): each measures one workload's variants
interleaved in one process and returns a dict; bench.compute prints them as one JSON."""
