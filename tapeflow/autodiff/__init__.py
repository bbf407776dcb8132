from .tape import GradientTape, UnconnectedGradients, backward  # noqa: F401
from .custom_gradient import custom_gradient  # noqa: F401
from .functional import grad, value_and_grad  # noqa: F401
