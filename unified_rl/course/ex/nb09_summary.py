"""Exercises of notebook 09 (the summary): reading the GC table.

In the notebook:  from unified_rl.course.ex.nb09_summary import q1, q2
"""

from unified_rl.course.exercises import ChoiceExercise, ValueExercise
from unified_rl.course.i18n import Msg
from unified_rl.course.widgets import paradigm_coefficients, synthetic_batch

# q1 (choice): which methods can push a token's log-probability *down* (a negative GC)?
q1 = ChoiceExercise(
    {"SFT and RFT": "", "DPO, PPO and GRPO": "", "PPO and GRPO only": "", "all of them": ""},
    "DPO, PPO and GRPO", var="pushes_down", title=Msg("nb09.q1.title"),
    hint=Msg("nb09.q1.hint"),
    why={"SFT and RFT": Msg("nb09.q1.why.SFT_and_RFT"),
         "PPO and GRPO only": Msg("nb09.q1.why.PPO_and_GRPO_only"),
         "all of them": Msg("nb09.q1.why.all_of_them")},
)


# q2 (predict-then-run): the number of methods in the table whose GC on the synthetic batch of the
# paradigm explorer has at least one negative entry; computed by the package's own coefficients.
def _negative_methods():
    coefs = paradigm_coefficients(synthetic_batch(), beta=0.1, group_size=4)
    return float(sum(bool((c < 0).any()) for c in coefs.values()))


q2 = ValueExercise(_negative_methods, atol=0.0, var="n_negative",
                   title=Msg("nb09.q2.title"),
                   hint=Msg("nb09.q2.hint"),
                   wrong=[2.0, 5.0, 0.0])
