"""The builders of the generated reference pages, one module a page (docs/gen_reference.py, the
MkDocs hook and script, loads this package by its path and lists the pages):

* `configs`: the job kinds' config fields (reference/configs.md);
* `cli`: every `python -m ...` entry point and `manage.py` command (reference/cli.md);
* `api`: the REST API's routes from its OpenAPI schema (reference/api.md);
* `specs`: the judge and guesser spec kinds and the web app's model kinds (reference/specs.md);
* `common`: what they share (the repository root, Django set up, a Markdown table cell).
"""
