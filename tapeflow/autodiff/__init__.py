from .tape import GradientTape, UnconnectedGradients, backward  # noqa: F401
from .custom_gradient import custom_gradient, recompute_grad  # noqa: F401
from .functional import ForwardAccumulator, grad, gradients, hessians, value_and_grad, AggregationMethod  # noqa: F401
