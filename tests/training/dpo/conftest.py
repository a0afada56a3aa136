import pytest

from tests.training.sft.helpers import tiny_model


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory):
    return tiny_model(tmp_path_factory)
