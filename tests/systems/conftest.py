"""Every test here keeps prepared catalogs in its own folder, never the user's cache."""
import pytest

from shareval.systems import rcc_cache


@pytest.fixture(autouse=True)
def own_cache_dir(tmp_path_factory, monkeypatch):
    folder = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv(rcc_cache.ENV, str(folder))
    return folder
