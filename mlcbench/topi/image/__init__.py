"""Image operators written in TE: ``resize2d``."""
from .resize import resize2d
