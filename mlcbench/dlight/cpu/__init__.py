"""CPU default-schedule rules, tried in the order ``default_rules()`` lists them."""
from .matmul import Matmul
from .conv2d import Conv2D
from .winograd import Winograd
from .window import WindowReduction
from .reduction import Reduction
from .elementwise import Elementwise
from .fallback import Fallback


def default_rules() -> list:
    """Matmul, Winograd, Conv2D, WindowReduction, Reduction, Elementwise, then Fallback
    (which always applies)."""
    return [Matmul(), Winograd(), Conv2D(), WindowReduction(), Reduction(), Elementwise(), Fallback()]


__all__ = ["Matmul", "Winograd", "Conv2D", "WindowReduction", "Reduction", "Elementwise", "Fallback", "default_rules"]
