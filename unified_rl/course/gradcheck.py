"""Function exercises, checked by value and by gradient against the package's own function.

A coefficient is a weight, not something to differentiate: eq 5's surrogate multiplies it by logp
and backpropagates into logp only. So a coefficient exercise makes the policy's log-probs require
grad, runs the learner's function and the reference on them, and backpropagates eq 5's surrogate
*without* its detach through both: a coefficient that still carries a gradient changes what reaches
logp and is rejected, even where its values are right. An objective or a surrogate (a scalar) is
backpropagated as it is, into logp and into `coef`, which must receive nothing.

Which inputs require grad is read from the reference's signature (`logp`, `logp_chosen`, ...; never
`logp_ref` or `logp_old`, which no gradient should reach) unless `grad=` names them.

A model among the inputs is the learner's own (the notebook passes the same object on): the answer must
leave it as it found it. Its parameters and buffers (names, values, dtypes, devices, requires_grad), its
adapters' on/off state, and what `keeps(inputs)` computes from it are read before and after the answer.
"""

import inspect

import torch

from .base import _MISSING, Exercise, Wrong
from .compare import _clone, _describe, _flat, compare, compare_gradients, gradients, short_repr
from .i18n import t, text

_NOT_POLICY = ("logp_ref", "logp_old")


def _stub_function(*args, **kwargs):
    """The stub of a function exercise."""
    # YOUR CODE HERE
    raise NotImplementedError()


def surrogate_without_detach(*pairs):
    """loss(result, inputs): eq 5's surrogate summed over (output index, logp name, mask name) pairs,
    with the coefficient NOT detached. logp name None: a fixed log-prob tensor `_logp` of the mask's shape."""
    pairs = pairs or ((None, "logp", "mask"),)

    def loss(result, inputs):
        total = 0.0
        for index, logp, mask in pairs:
            coef, m = (result if index is None else result[index]), inputs[mask]
            if logp is None or not torch.is_tensor(inputs.get(logp)):  # no log-probs among the inputs
                logp = f"_logp{'' if index is None else index}"
                inputs[logp] = -torch.linspace(0.1, 3.0, m.numel(), dtype=m.dtype).view_as(m).requires_grad_()
            total = total - ((coef * inputs[logp] * m).sum(-1) / m.sum(-1)).mean()
        return total
    return loss


def _policy_inputs(reference):
    """The reference's arguments that are the policy's log-probs, and the mask paired with each."""
    params = inspect.signature(reference).parameters
    logps = [p for p in params if p == "logp" or p.startswith("logp_") and not p.startswith(_NOT_POLICY)]
    return logps, [(None if len(logps) == 1 else i, lp, "mask" + lp[4:]) for i, lp in enumerate(logps)
                   if "mask" + lp[4:] in params]


def leaky(fn, through=("logp",)):
    """fn with a gradient leak that leaves its values unchanged: what a forgotten `.detach()` does."""
    def leaky_fn(**kw):
        out = fn(**kw)
        s = sum(kw[n].sum() for n in through if torch.is_tensor(kw.get(n)) and kw[n].requires_grad)
        leak = s - s.detach() if torch.is_tensor(s) else 0.0  # value 0, gradient 1
        return tuple(o + leak for o in out) if isinstance(out, tuple) else out + leak
    leaky_fn.__name__ = f"leaky_{getattr(fn, '__name__', 'fn')}"
    return leaky_fn


def _model_state(module):
    """What a function given `module` must leave unchanged: each tensor of its state (value, dtype, device),
    each parameter's requires_grad, and each adapter layer's switch (peft's `_disable_adapters`)."""
    tensors = {k: v.detach().clone() for k, v in module.state_dict(keep_vars=True).items()}
    grads = {k: p.requires_grad for k, p in module.named_parameters()}
    switches = {k: bool(m._disable_adapters) for k, m in module.named_modules() if hasattr(m, "_disable_adapters")}
    return tensors, grads, switches


def _model_damage(before, module):
    """None if `module` still has the state `before` recorded, else what changed, in words."""
    tensors, grads, switches = before
    now, now_grads, now_switches = _model_state(module)
    if set(now) != set(tensors):
        gone, new = sorted(set(tensors) - set(now)), sorted(set(now) - set(tensors))
        return t("fn.model.gone", names=", ".join(gone[:3]) + (" ..." if len(gone) > 3 else "")) if gone else \
            t("fn.model.new", names=", ".join(new[:3]))
    for k, v in tensors.items():
        if (now[k].dtype, now[k].device) != (v.dtype, v.device):
            return t("fn.model.moved", name=k, before=f"{v.dtype}, {v.device}", after=f"{now[k].dtype}, {now[k].device}")
        if now[k].shape != v.shape or not torch.equal(now[k], v):
            return t("fn.model.values", name=k)
    changed = [k for k in grads if now_grads.get(k) != grads[k]]
    if changed:
        return t("fn.model.requires_grad", name=changed[0], before=grads[changed[0]], after=now_grads.get(changed[0]))
    if now_switches != switches:
        return t("fn.model.adapters_off" if any(now_switches.values()) else "fn.model.adapters_on")
    return None


class FunctionExercise(Exercise):
    """A function, run on named edge cases and random inputs and compared with a reference function.

    cases: {name: kwargs or callable(generator) -> kwargs}; random_inputs: callable(generator) ->
    kwargs, called n_random times. Outputs (tensors, numbers or tuples of them) must match the
    reference within atol/rtol, and the learner's function must not modify its inputs.
    detached=True (a coefficient): the result must carry no gradient, and the gradient of eq 5's
    surrogate without detach (`loss`, default `surrogate_without_detach` over the policy's log-probs)
    must match the reference's. A reference from `objectives` or `paradigm` (a scalar) is compared by
    its gradient too. `grad`: the inputs made to require grad (default: read off the signature).
    keeps: callable(inputs) -> tensor, what a model among the inputs must still compute after the answer
    ran (e.g. the policy's log-probs); every model input's state is checked in any case (module doc).
    """

    kind = "function"
    points = 3  # an implementation, checked by its values and its gradient

    def __init__(self, reference, cases=None, *, random_inputs=None, n_random=5, atol=1e-5, rtol=1e-5,
                 detached=False, seed=0, grad=_MISSING, loss=_MISSING, keeps=None, **kw):
        if not cases and random_inputs is None:
            raise ValueError("a FunctionExercise needs cases or random_inputs to test on")
        super().__init__(**kw)
        self.reference, self.cases, self.random_inputs = reference, dict(cases or {}), random_inputs
        self.n_random, self.atol, self.rtol, self.detached, self.seed = n_random, atol, rtol, detached, seed
        logps, pairs = _policy_inputs(reference)
        scalar = getattr(reference, "__module__", "").split(".")[1:2] in (["objectives"], ["paradigm"])
        if grad is _MISSING:
            params = inspect.signature(reference).parameters
            grad = tuple(logps) + (("coef",) if scalar and "coef" in params else ()) if (detached or scalar) else ()
        if loss is _MISSING:
            loss = surrogate_without_detach(*pairs) if detached and pairs else None
        self.grad, self.loss, self.keeps = tuple(grad), loss, keeps

    @property
    def stub(self):
        return _stub_function

    @property
    def checks_gradient(self):
        return bool(self.grad) or self.loss is not None

    def inputs(self):
        """(where, kwargs) for every input the checker runs: the named cases, then the random draws."""
        gen = torch.Generator().manual_seed(self.seed)
        for name, make in self.cases.items():
            yield t("fn.case", name=text(name)), make(gen) if callable(make) else make
        for i in range(self.n_random if self.random_inputs else 0):
            yield t("fn.random", i=i + 1), self.random_inputs(gen)

    def _gradients(self, result, inputs):
        loss = result if self.loss is None else self.loss(result, inputs)
        wrt = {n: inputs[n] for n in list(self.grad) + [k for k in inputs if k.startswith("_logp")]
               if torch.is_tensor(inputs.get(n)) and inputs[n].requires_grad}
        if not torch.is_tensor(loss) or loss.dim() != 0:
            raise Wrong(t("fn.scalar", got=short_repr(loss, 60)))
        if not loss.requires_grad:
            return {n: torch.zeros_like(t) for n, t in wrt.items()}
        return gradients(loss, wrt)

    def _check(self, answer):
        if not callable(answer):
            raise Wrong(t("fn.expected_function", got=short_repr(answer)))
        for where, kwargs in self.inputs():
            ref_in = _clone(kwargs, self.grad)
            want = self.reference(**ref_in)
            given = _clone(kwargs, self.grad)
            models = {k: _model_state(v) for k, v in kwargs.items() if isinstance(v, torch.nn.Module)}
            kept = self._kept(kwargs) if models else None
            try:
                got = answer(**given)
            except NotImplementedError:
                raise
            except Exception as e:  # the learner's bug, reported rather than raised
                raise Wrong(t("fn.raised", where=where, inputs=_describe(kwargs), error=type(e).__name__, message=e)) from None
            self._unharmed(models, kwargs, kept, where)
            for k, v in kwargs.items():
                if compare(given[k], v, atol=0, rtol=0) is not None:
                    raise Wrong(t("fn.in_place", name=k))
            msg = compare(got, want, atol=self.atol, rtol=self.rtol)
            if msg:
                raise Wrong(t("fn.on", where=where, inputs=_describe(kwargs), why=msg))
            if self.detached and any(torch.is_tensor(t) and t.requires_grad for t in _flat(got)):
                raise Wrong(t("fn.carries_grad", where=where))
            if self.checks_gradient:
                msg = compare_gradients(self._gradients(got, given), self._gradients(want, ref_in),
                                        atol=self.atol, rtol=self.rtol)
                if msg and self.detached:
                    msg += t("fn.other_path")
                if msg:
                    raise Wrong(t("fn.values_right_but", where=where, why=msg))

    def _kept(self, inputs):
        """What `keeps` computes from the inputs now (None without `keeps`)."""
        if self.keeps is None:
            return None
        with torch.no_grad():
            return self.keeps(**inputs).detach().clone()

    def _unharmed(self, models, inputs, kept, where):
        """Raise Wrong if the answer changed a model it was given (state, adapters, or what it computes)."""
        for k, before in models.items():
            why = _model_damage(before, inputs[k])
            if why:
                raise Wrong(t("fn.model_changed", where=where, name=k, why=why))
        if kept is not None:
            try:
                now = self._kept(inputs)
            except Exception as e:  # a model the answer broke so far that it no longer runs
                raise Wrong(t("fn.model_changed", where=where, name=next(iter(models)),
                              why=f"{type(e).__name__}: {e}")) from None
            if now.shape != kept.shape or not torch.allclose(now, kept, rtol=0, atol=1e-12):
                raise Wrong(t("fn.model_changed", where=where, name=next(iter(models)), why=t("fn.model.outputs")))
