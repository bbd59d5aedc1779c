"""CPU default-schedule rules, tried in the order ``default_rules()`` lists them."""
from .matmul import Matmul
from .conv2d import Conv2D
from .winograd import Winograd
from .winograd_nhwc import WinogradNHWC
from .window import WindowReduction
from .reduction import Reduction
from .elementwise import Elementwise
from .fallback import Fallback


def default_rules() -> list:
    """Winograd, WinogradNHWC, Matmul, Conv2D, WindowReduction, Reduction, Elementwise,
    then Fallback (which always applies). The Winograd rules are first: they recognise
    their kernels by their stage names at once, where Matmul's analysis of them took
    most of their build time."""
    return [Winograd(), WinogradNHWC(), Matmul(), Conv2D(), WindowReduction(), Reduction(), Elementwise(), Fallback()]


__all__ = ["Matmul", "Winograd", "WinogradNHWC", "Conv2D", "WindowReduction", "Reduction", "Elementwise", "Fallback", "default_rules"]
