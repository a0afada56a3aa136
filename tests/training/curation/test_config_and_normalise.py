import pytest

from training.curation.config import CurationConfig
from training.curation.normalise import (
    BLANK,
    DUPLICATE,
    NOT_A_WORD,
    TOO_LONG,
    normalise_entries,
    split_entries,
)


@pytest.mark.parametrize(
    "params,message",
    [
        ({"val": 0.5, "test": 0.5, "sft": 0.1, "rl": 0.0}, "sum to 1.1"),
        ({"split_by": "fraction", "rl": 2.0}, "at most 1"),
        ({"split_by": "count", "val": 10.5}, "whole numbers"),
        ({"val": -0.1}, "0 or more"),
        ({"samples": 4, "min_solved": 5}, "min_solved"),
        ({"source": "text", "words": "  \n "}, "paste at least one word"),
        ({"source": "word_lists", "word_lists": ()}, "name at least one word list"),
        ({"source": "nowhere"}, "source must be"),
        ({"rl_band_low": 0.8, "rl_band_high": 0.2}, "rl_band_low"),
        ({"curriculum": (0.5, 1.5)}, "curriculum"),
        ({"exclude_lexnames": ("feeling",)}, "lexical files"),
        ({"name": " padded "}, "name"),
    ],
)
def test_invalid_configs_are_refused(params, message):
    with pytest.raises(ValueError, match=message):
        CurationConfig(**params)


def test_paper_sizes_and_fractions_summing_to_one_are_accepted():
    paper = CurationConfig(split_by="count", val=238, test=487, sft=341, rl=3612)
    assert paper.split_total_count == 4678
    assert (
        CurationConfig(val=0.1, test=0.2, sft=0.3, rl=0.4).split_total_count == 0
    )  # 0.1+0.2+0.3+0.4 > 1 in floats


def test_uploaded_text_is_normalised_and_every_dropped_entry_has_a_reason():
    text = (
        "Dog\n\n  ICE   cream \ndog\nCafé\n42\ncat!\nhot_dog\nanimals\tCat\nT-Shirt, kite;  \n"
        + "very " * 5
        + "long\n"
    )
    entries = split_entries(text)
    result = normalise_entries(entries)
    assert [c.word for c in result.candidates] == [
        "dog",
        "ice cream",
        "cafe",
        "hot dog",
        "cat",
        "t-shirt",
        "kite",
    ]
    assert dict(result.dropped) == {
        "''": BLANK,
        "dog": DUPLICATE,
        "42": NOT_A_WORD,
        "cat!": NOT_A_WORD,
        "very very very very very long": TOO_LONG,
    } | {"'  '": BLANK}
    assert result.n_entries == len(result.candidates) + len(result.dropped) == len(entries)
    assert result.candidates[4].category == "animals"
    assert result.changed == {"case": 5, "spacing": 2, "accents": 1, "underscores": 1}
    assert (
        result.candidates[0].raw == "Dog"
        and result.candidates[6].raw == " kite"
        and result.candidates[2].raw == "Café"
    )


def test_trailing_newline_is_not_a_blank_entry_but_blank_lines_are():
    assert split_entries("a\nb\n") == ["a", "b"]
    assert split_entries("a\n\nb") == ["a", "", "b"]
    assert split_entries("animals\tCat;Kitty\r\nx") == ["animals\tCat;Kitty", "x"]
