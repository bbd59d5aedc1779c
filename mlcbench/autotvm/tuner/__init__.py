"""Tuners: RandomTuner, GridSearchTuner, GATuner, XGBTuner (TVM's ``autotvm.tuner``)."""
from .ga_tuner import GATuner
from .random_tuner import GridSearchTuner, RandomTuner
from .tuner import Tuner
from .xgboost_tuner import XGBTuner
