"""Analyses of TensorIR: access regions of blocks and variable scoping.

``get_block_read_write_region(block)`` gives the ``T.reads`` / ``T.writes`` TVM would
infer; ``verify_well_formed(func)`` checks that every variable is used in scope.
"""
from .regions import (get_block_access_region, get_block_read_write_region,
                      relax_block_regions, relax_region)
from .verify import undefined_vars, verify_well_formed
from .inplace import can_write_in_place
