"""Exercises of notebook 09 (the summary): reading the GC table.

In the notebook:  from unified_rl.course.ex.nb09_summary import q1, q2
"""

from unified_rl.course.exercises import ChoiceExercise, ValueExercise
from unified_rl.course.widgets import paradigm_coefficients, synthetic_batch

# q1 (choice): which methods can push a token's log-probability *down* (a negative GC)?
q1 = ChoiceExercise(
    {"SFT and RFT": "", "DPO, PPO and GRPO": "", "PPO and GRPO only": "", "all of them": ""},
    "DPO, PPO and GRPO", var="pushes_down", title="Q1: which methods have negative coefficients?",
    hint="Look at the GC column: which coefficients are an indicator or 1, and which can change sign?",
    why={"SFT and RFT": "their GC is 1 or I(o), never below 0: they can only push up (or ignore)",
         "PPO and GRPO only": "DPO's rejected response gets -beta * sigma(...): it is pushed down",
         "all of them": "SFT's GC is always 1 and RFT's is 0 or 1"},
)


# q2 (predict-then-run): the number of methods in the table whose GC on the synthetic batch of the
# paradigm explorer has at least one negative entry; computed by the package's own coefficients.
def _negative_methods():
    coefs = paradigm_coefficients(synthetic_batch(), beta=0.1, group_size=4)
    return float(sum(bool((c < 0).any()) for c in coefs.values()))


q2 = ValueExercise(_negative_methods, atol=0.0, var="n_negative",
                   title="Q2: on a batch, how many of the five coefficients have a negative entry?",
                   hint="The explorer shows five coefficients: SFT, RFT / online RFT, DPO, PPO and GRPO. "
                        "Q1 told you which can be negative; on a batch with mixed rewards, all of those are.",
                   wrong=[2.0, 5.0, 0.0])
