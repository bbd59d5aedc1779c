"""CPU default-schedule rules, tried in the order ``default_rules()`` lists them."""
from .matmul import Matmul
from .conv2d import Conv2D
from .winograd import Winograd
from .window import WindowReduction
from .reduction import Reduction
from .elementwise import Elementwise
from .fallback import Fallback


def default_rules() -> list:
    """Winograd, Matmul, Conv2D, WindowReduction, Reduction, Elementwise, then Fallback
    (which always applies). Winograd is first: it recognises its kernels by their stage
    names at once, where Matmul's analysis of them took most of their build time."""
    return [Winograd(), Matmul(), Conv2D(), WindowReduction(), Reduction(), Elementwise(), Fallback()]


__all__ = ["Matmul", "Winograd", "Conv2D", "WindowReduction", "Reduction", "Elementwise", "Fallback", "default_rules"]
