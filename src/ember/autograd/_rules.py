"""The local derivative of common ops in words, for ``explain``: what each node's backward
multiplies the incoming gradient by (the chain rule's local factor)."""
from __future__ import annotations

import re

from ._describe import format_number

# Per op (the node name without "Backward<N>"): one text per forward argument, written with
# the argument letters a, b, c; or a function of (symbols, numel_in, numel_out) giving them.
_UNARY = {
    "Neg": "d(-a)/da = -1",
    "Exp": "d(exp(a))/da = exp(a)",
    "Exp2": "d(2 ** a)/da = 2 ** a * log(2)",
    "Expm1": "d(exp(a) - 1)/da = exp(a)",
    "Log": "d(log(a))/da = 1 / a",
    "Log2": "d(log2(a))/da = 1 / (a * log(2))",
    "Log10": "d(log10(a))/da = 1 / (a * log(10))",
    "Log1p": "d(log(1 + a))/da = 1 / (1 + a)",
    "Sqrt": "d(sqrt(a))/da = 1 / (2 * sqrt(a))",
    "Rsqrt": "d(1 / sqrt(a))/da = -1 / (2 * a ** 1.5)",
    "Reciprocal": "d(1 / a)/da = -1 / a ** 2",
    "Sin": "d(sin(a))/da = cos(a)",
    "Cos": "d(cos(a))/da = -sin(a)",
    "Tan": "d(tan(a))/da = 1 + tan(a) ** 2",
    "Asin": "d(asin(a))/da = 1 / sqrt(1 - a ** 2)",
    "Acos": "d(acos(a))/da = -1 / sqrt(1 - a ** 2)",
    "Atan": "d(atan(a))/da = 1 / (1 + a ** 2)",
    "Sinh": "d(sinh(a))/da = cosh(a)",
    "Cosh": "d(cosh(a))/da = sinh(a)",
    "Tanh": "d(tanh(a))/da = 1 - tanh(a) ** 2",
    "Sigmoid": "d(sigmoid(a))/da = sigmoid(a) * (1 - sigmoid(a))",
    "LogSigmoid": "d(log(sigmoid(a)))/da = 1 - sigmoid(a)",
    "Relu": "d(relu(a))/da = 1 where a > 0, else 0",
    "LeakyRelu": "d(leaky_relu(a))/da = 1 where a > 0, else the slope",
    "Elu": "d(elu(a))/da = 1 where a > 0, else elu(a) + alpha",
    "Gelu": "d(gelu(a))/da = Phi(a) + a * phi(a)",
    "Silu": "d(a * sigmoid(a))/da = sigmoid(a) * (1 + a * (1 - sigmoid(a)))",
    "Mish": "d(a * tanh(softplus(a)))/da = tanh(sp) + a * sigmoid(a) * (1 - tanh(sp) ** 2)",
    "Softplus": "d(log(1 + exp(a)))/da = sigmoid(a)",
    "Hardtanh": "d(hardtanh(a))/da = 1 inside [min, max], else 0",
    "Threshold": "d(threshold(a))/da = 1 where a > threshold, else 0",
    "Abs": "d(|a|)/da = sign(a)",
    "Sign": "d(sign(a))/da = 0",
    "Round": "d(round(a))/da = 0",
    "Clamp": "d(clamp(a))/da = 1 inside [min, max], else 0",
    "Erf": "d(erf(a))/da = 2 / sqrt(pi) * exp(-a ** 2)",
    "Clone": "d(a)/da = 1 (a copy)",
    "ToCopy": "d(a.to(...))/da = 1, cast back to a's dtype and device",
    "Sum": "d(sum(a))/da_i = 1 (grad is copied to each element)",
    "Logsumexp": "d(logsumexp(a))/da = softmax(a)",
    "Softmax": "d(softmax(a))/da: s * (grad - sum(grad * s)), s = softmax(a)",
    "LogSoftmax": "d(log_softmax(a))/da: grad - softmax(a) * sum(grad)",
    "Max": "d(max(a))/da = 1 at the maximum (shared among ties), else 0",
    "Min": "d(min(a))/da = 1 at the minimum (shared among ties), else 0",
    "Amax": "d(amax(a))/da = 1 at the maximum (shared among ties), else 0",
    "Amin": "d(amin(a))/da = 1 at the minimum (shared among ties), else 0",
    "Var": "d(var(a))/da = 2 * (a - mean(a)) / (n - correction)",
    "LinalgVectorNorm": "d(norm(a))/da = a / norm(a) (2-norm; |a|^(p-1) sign(a) in general)",
    "Norm": "d(norm(a))/da = a / norm(a) (2-norm)",
    "Cumsum": "d(cumsum(a))/da: the reversed cumulative sum of grad",
    "Expand": "d(expand(a))/da: grad summed over the expanded dimensions",
    "Repeat": "d(repeat(a))/da: grad summed over the repeated copies",
    "View": "d(view(a))/da: grad reshaped back to a's shape",
    "UnsafeView": "d(reshape(a))/da: grad reshaped back to a's shape",
    "Squeeze": "d(squeeze(a))/da: grad reshaped back to a's shape",
    "Unsqueeze": "d(unsqueeze(a))/da: grad reshaped back to a's shape",
    "Transpose": "d(a.transpose(i, j))/da: grad transposed back",
    "Permute": "d(a.permute(...))/da: grad permuted back",
    "Flip": "d(flip(a))/da: grad flipped back",
    "Roll": "d(roll(a))/da: grad rolled back",
    "Select": "d(a[i])/da: grad placed at index i, zeros elsewhere",
    "Slice": "d(a[i:j])/da: grad placed in the slice, zeros elsewhere",
    "Index": "d(a[index])/da: grad added at the indexed positions, zeros elsewhere",
    "IndexSelect": "d(index_select(a))/da: grad added at the selected rows",
    "Gather": "d(gather(a))/da: grad scattered back to the gathered positions",
    "MaskedSelect": "d(a[mask])/da: grad placed where mask is true",
    "ConstantPadNd": "d(pad(a))/da: grad with the padding cut off",
    "Trace": "d(trace(a))/da = the identity matrix",
    "Tril": "d(tril(a))/da: grad's lower triangle",
    "Triu": "d(triu(a))/da: grad's upper triangle",
    "MaxPool2DWithIndices": "d(max_pool(a))/da: grad goes to the max of each window",
    "AvgPool2D": "d(avg_pool(a))/da: grad spread evenly over each window",
    "Embedding": "d(embedding(w))/dw: grad added into the looked-up rows",
}
_NARY = {
    "Add": ("d(a + b)/da = 1", "d(a + b)/db = 1"),
    "Sub": ("d(a - b)/da = 1", "d(a - b)/db = -1"),
    "Mul": ("d(a * b)/da = b", "d(a * b)/db = a"),
    "Div": ("d(a / b)/da = 1 / b", "d(a / b)/db = -a / b ** 2"),
    "Maximum": ("d(maximum(a, b))/da = 1 where a > b (1/2 at ties)",
                "d(maximum(a, b))/db = 1 where b > a (1/2 at ties)"),
    "Minimum": ("d(minimum(a, b))/da = 1 where a < b (1/2 at ties)",
                "d(minimum(a, b))/db = 1 where b < a (1/2 at ties)"),
    "Where": (None, "d(where(c, a, b))/da = 1 where c, else 0",
              "d(where(c, a, b))/db = 1 where not c, else 0"),
    "Atan2": ("d(atan2(a, b))/da = b / (a ** 2 + b ** 2)",
              "d(atan2(a, b))/db = -a / (a ** 2 + b ** 2)"),
    "Hypot": ("d(hypot(a, b))/da = a / hypot(a, b)", "d(hypot(a, b))/db = b / hypot(a, b)"),
    "Lerp": ("d(lerp(a, b, w))/da = 1 - w", "d(lerp(a, b, w))/db = w",
             "d(lerp(a, b, w))/dw = b - a"),
    "Xlogy": ("d(a * log(b))/da = log(b)", "d(a * log(b))/db = a / b"),
    "Logaddexp": ("d(logaddexp(a, b))/da = sigmoid(a - b)",
                  "d(logaddexp(a, b))/db = sigmoid(b - a)"),
    "Mm": ("d(A @ B)/dA = grad @ B.T", "d(A @ B)/dB = A.T @ grad"),
    "Mv": ("d(A @ v)/dA = outer(grad, v)", "d(A @ v)/dv = A.T @ grad"),
    "Addmm": ("d(c + A @ B)/dc = grad, summed to c's shape",
              "d(c + A @ B)/dA = grad @ B.T", "d(c + A @ B)/dB = A.T @ grad"),
    "Convolution": ("d(conv(x, w))/dx: grad convolved back with w (transposed convolution)",
                    "d(conv(x, w))/dw: x correlated with grad",
                    "d(conv(x, w) + bias)/dbias = grad summed over batch and space"),
    "NllLoss": ("d(nll_loss(a, t))/da = -1/N at each target class (times its weight)",),
    "BinaryCrossEntropy": ("d(bce(p, y))/dp = (p - y) / (p * (1 - p)), averaged",
                           "d(bce(p, y))/dy = log((1 - p) / p), averaged"),
}
# Ops whose inputs broadcast to the output: their backward sums gradients back to each
# input's shape, and explain marks where it did.
BROADCASTING = {"Add", "Sub", "Mul", "Div", "Pow", "Maximum", "Minimum", "Fmax", "Fmin",
                "Where", "Atan2", "Hypot", "Fmod", "Remainder", "Lerp", "Xlogy",
                "Logaddexp", "Logaddexp2", "Expand", "Addmm", "MaskedFill", "Clamp"}

_BASE = re.compile(r"^(.*?)Backward\d*s?$")


def op_of(node_name: str) -> str:
    """``MulBackward0`` -> ``Mul``."""
    match = _BASE.match(node_name)
    return match.group(1) if match else node_name


def _constant(node, position):
    scalars = getattr(node, "scalars", None)  # Python-number operands, when the op keeps them
    if isinstance(scalars, tuple) and position < len(scalars):
        value = scalars[position]
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return format_number(float(value))
    return None


def _pow(node, positions, numel_in, numel_out):
    name = node.name()
    if name == "PowBackward0":  # tensor ** number
        n = _constant(node, 1)
        if n is None:
            return ["d(a ** n)/da = n * a ** (n - 1)"]
        lower = format_number(float(n) - 1)
        tail = "" if lower == "0" else (" * a" if lower == "1" else f" * a ** {lower}")
        return [f"d(a ** {n})/da = {n}{tail}"]
    if name == "PowBackward2":  # number ** tensor
        c = _constant(node, 0) or "c"
        return [f"d({c} ** b)/db = {c} ** b * log({c})"]
    return ["d(a ** b)/da = b * a ** (b - 1)", "d(a ** b)/db = a ** b * log(a)"][:len(positions)]


def _mean(node, positions, numel_in, numel_out):
    if numel_out and numel_in:
        n = numel_in // numel_out
        return [f"d(mean(a))/da_i = 1/{n} (n = {n} elements)"]
    return ["d(mean(a))/da_i = 1/n (n elements)"]


def _cat(node, positions, numel_in, numel_out):
    return [f"d(cat(...))/d(piece {i + 1}): its slice of grad" for i in positions]


def _stack(node, positions, numel_in, numel_out):
    return [f"d(stack(...))/d(piece {i + 1}): grad[{i}]" for i in positions]


_CALLABLE = {"Pow": _pow, "Mean": _mean, "Cat": _cat, "Stack": _stack}


def derivative(node, positions, numel_in: int = 0, numel_out: int = 0) -> list[str]:
    """One text per gradient-carrying forward argument (``positions``, in order): the local
    derivative of the node's op with respect to that argument."""
    name = node.name()
    if name == "AccumulateGrad":
        return ["leaf: backward() adds it to .grad"]
    op = op_of(name)
    if op in _CALLABLE:
        return _CALLABLE[op](node, positions, numel_in, numel_out)
    if op in _UNARY and len(positions) == 1:
        return [_UNARY[op]]
    texts = _NARY.get(op)
    if texts is not None and all(p < len(texts) and texts[p] for p in positions):
        out = []
        for p in positions:
            text = texts[p]
            for q, letter in enumerate("ab"):
                value = _constant(node, q) if q != p else None
                if value is not None:
                    text = _substitute(text, letter, value)
            out.append(text)
        return out
    return [f"{name}'s own backward formula (the vector-Jacobian product of {op})"
            for _ in positions] or [f"{name}'s own backward formula"]


def _substitute(text: str, letter: str, value: str) -> str:
    """Put a known constant in place of its letter: ``d(a * b)/da = b`` -> ``... = 3``."""
    value = f"({value})" if value.startswith("-") else value
    return re.sub(rf"(?<![A-Za-z_]){letter}(?![A-Za-z_(])", value, text)
