"""Neural-network operators written in TE: dense, convolution, pooling, softmax, norms."""
from .conv2d import (conv2d, conv2d_nchw, conv2d_nhwc, depthwise_conv2d_nchw,
                     get_pad_tuple, group_conv2d_nchw, group_conv2d_nchw_by_group,
                     ungroup_channels)
from .conv2d_transpose import conv2d_transpose_nchw
from .dense import batch_matmul, dense, matmul
from .elemwise import gelu, leaky_relu, relu, sigmoid, silu, tanh
from .norm import batch_norm, layer_norm, lrn
from .pad import mirror_pad, pad
from .pooling import global_avg_pool2d, global_pool, pool2d
from .softmax import log_softmax, softmax
from .flatten import flatten
from .winograd import (conv2d_winograd_nchw, conv2d_winograd_weight_transform,
                       conv2d_winograd_without_weight_transform)
from .winograd_nhwc import (conv2d_winograd_nhwc, conv2d_winograd_nhwc_weight_transform,
                            winograd_nhwc_data_pack, winograd_nhwc_inverse,
                            winograd_nhwc_weight)
