"""contrib.utils.tempdir (and contrib.util, its older name)."""
import os

from mlcbench.contrib import util, utils


def test_tempdir_relpath_lists_and_removes():
    tmp = utils.tempdir()
    path = tmp.relpath("deploy.so")
    assert os.path.dirname(path) == tmp.temp_dir
    open(path, "w").close()
    assert tmp.listdir() == ["deploy.so"]
    tmp.remove()
    assert not os.path.exists(tmp.temp_dir)


def test_an_absolute_name_stays_itself_and_a_custom_path_is_kept(tmp_path):
    tmp = util.tempdir(str(tmp_path / "mine"))
    assert tmp.relpath(str(tmp_path / "x.so")) == str(tmp_path / "x.so")
    tmp.remove()
    assert (tmp_path / "mine").is_dir()
