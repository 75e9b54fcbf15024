"""Device names from the config or the command line: what runs, and the one-line errors that name where the name came from."""

import pytest
import torch

from toolkit.device import resolve_device, resolve_precision
from toolkit.errors import ConfigurationError


def test_auto_and_cpu():
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    assert resolve_device("cpu") == torch.device("cpu")


@pytest.mark.parametrize("name", ["tpu", "mps", "meta", "cuda:x", "", "cpu cuda"])
def test_a_name_this_toolkit_does_not_run_on_names_the_key(name):
    with pytest.raises(ConfigurationError, match=f'^--device: \'{name}\' is not a device this toolkit runs on; use "auto", "cpu", "cuda" or "cuda:N"$'):
        resolve_device(name, "--device")


def test_a_cuda_device_this_machine_lacks_names_the_key():
    """Without a GPU, "CUDA is not available"; with one, cuda:99 is past the last device. Both say which key."""
    with pytest.raises(ConfigurationError, match=r"^trainer\.device is 'cuda:99' but "):
        resolve_device("cuda:99")


def test_precision():
    cpu = torch.device("cpu")
    assert resolve_precision("auto", cpu) is None and resolve_precision("bf16", cpu) == "bf16"
    with pytest.raises(ConfigurationError, match="needs a GPU"):
        resolve_precision("fp16", cpu)
    with pytest.raises(ConfigurationError, match="must be null, 'auto', 'bf16' or 'fp16'"):
        resolve_precision("int8", cpu)
