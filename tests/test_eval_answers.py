"""Floors on the real-question dev set, measured with the real embedding model (bench/eval_answers.py).

The floors sit just below what the engine reaches today (README "Answer quality on real questions"),
so a change that makes answers worse on real questions fails here. The targets of the answer-engine
issue are higher; the README says which are met.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.eval_answers import evaluate, load_dev_set, summarise

pytestmark = pytest.mark.slow

# (metric, floor or ceiling) per language, from `.venv/bin/python bench/eval_answers.py`.
# 941 real questions: the 703 of stop 28, the 222 oldest held-out questions (ho1-zh/-en, ho-blind2, ho-blind3-zh/-en)
# moved into the dev set in stop 29 so the engine can learn from them, and dev-cards11 (16, mined blind). Measured on
# the merged engine of stop 29: act 0.835 / 0.839 (optimistic: the act model is trained on this folder; grouped CV
# 0.833 / 0.837), fidelity 0.959 / 0.945, 7 contradicted (each message describes two runs), 1 headline, 3 strawman,
# hit@3 0.809 / 0.838, hit@1 0.586 / 0.650, p90 110 / 120 words, 1 refusal. At the start of stop 29 (925 questions):
# act 0.796 / 0.812, fidelity 0.949 / 0.932, 37 contradicted, hit@3 0.792 / 0.825, hit@1 0.569 / 0.640.
# Stop 30 (merged engine, 941 questions): act 0.835 / 0.841, fidelity 0.961 / 0.948, 2 contradicted, hit@3
# 0.818 / 0.844, hit@1 0.601 / 0.647. Held-out now 241 (blind4-7): act 0.697 / 0.664, fidelity 0.899 / 0.858,
# 22 contradicted, 1 headline (blind7-en, also on the start engine), hit@3 0.635 / 0.757.
# Stop 31 start: blind4 and blind5 (139) moved into the dev set (ho-blind4-*, ho-blind5-*; act model retrained), 1080
# questions: act 0.816 / 0.812, fidelity 0.956 / 0.939, 14 contradicted, 1 headline, 3 strawman, hit@3 0.797 / 0.828,
# hit@1 0.572 / 0.624, p90 108 / 121, 2 refusals.
# Stop 31 end (merged engine, 1080): act 0.834 / 0.821, fidelity 0.959 / 0.940, 2 contradicted, 1 headline, 0 strawman,
# hit@3 0.825 / 0.843, hit@1 0.589 / 0.632, p90 108 / 120, 0 refusals.
# Stop 32 start: blind6 and blind7 (102) moved into the dev set (ho-blind6-*, ho-blind7-*). With blind6 (1132) on the
# start engine: act 0.835 / 0.818, fidelity 0.958 / 0.936, 2 + 4 contradicted, 1 headline, hit@3 0.816 / 0.843; blind7
# (50) brought 6 more contradicted and 1 headline (act model retrained on 1182: no change — the rules decide). Stop 32 end (merged engine, 1182): act 0.830 / 0.813, fidelity 0.957 /
# 0.938, 4 contradicted, 2 headlines, 0 strawman, hit@3 0.828 / 0.844, hit@1 0.589 / 0.624, p90 108 / 121, 0 refusals.
# Stop 33 start: blind8 (52) moved into the dev set (ho-blind8-*), 1234 questions on the start engine (tag s15start):
# act 0.832 / 0.804, fidelity 0.954 / 0.932, 5 + 13 contradicted (blind8 brought 4 + 10), 1 + 3 headlines, hit@3
# 0.829 / 0.839, hit@1 0.585 / 0.622, p90 108 / 121. Stop 33 end (merged engine): act 0.850 / 0.825, fidelity 0.960 /
# 0.942, 1 + 2 contradicted, 1 + 3 headlines, 0 strawman, hit@3 0.830 / 0.841, hit@1 0.583 / 0.624, p90 110 / 121
# (117 all), 0 refusals.
# Stop 34: blind9 (52) moved into the dev set (ho-blind9-*; act model retrained), 1286 questions. Blind9 brought 5 + 5
# contradicted values (on the start engine it scored act 0.60 / 0.667); with it, on the start engine: act 0.840 / 0.818,
# fidelity 0.957 / 0.939, 6 + 7 contradicted, hit@3 0.827 / 0.843, hit@1 0.574 / 0.619. End of stop 34: act 0.843 /
# 0.820, fidelity 0.957 / 0.942, 3 + 2 contradicted, 1 + 3 headlines, 0 strawman, hit@3 0.829 / 0.847, hit@1 0.578 /
# 0.627, p90 112 / 121 (117 all); fit questions whose first screen has no memory figure 59 + 50 -> 42 + 28.
# Stop 35: blind10 (52) moved into the dev set (1338). Start engine on the 1338: act 0.837 / 0.808, fidelity 0.955 /
# 0.931, 5 + 5 contradicted (blind10 brought 2 + 3), 1 + 3 headlines, hit@3 0.824 / 0.844, hit@1 0.572 / 0.626.
# Then 120 questions mined for stated-value fidelity (dev-mine35-*.yaml: number-rich; dev-mine35b-*.yaml: GPU counts
# and methods) -> 1458. End of stop 35: act 0.841 / 0.804, fidelity 0.956 / 0.921, 8 + 15 contradicted (mostly the
# new files: two runs with different GPU counts in one message), 1 + 3 headlines, hit@3 0.806 / 0.843, hit@1 0.554 /
# 0.613, p90 112 / 122.
# Stop 36: blind11 (52) moved into the dev set (1510; start engine, act model retrained: act 0.845 / 0.801, fidelity
# 0.955 / 0.919, 8 + 20 contradicted, hit@3 0.801 / 0.840, hit@1 0.550 / 0.609), then dev-mine36 (50, GPU counts and
# node layouts) -> 1560. End of stop 36: act 0.845 / 0.805, fidelity 0.956 / 0.921, 5 + 15 contradicted, 1 + 3
# headlines, 0 strawman, hit@3 0.802 / 0.838, hit@1 0.553 / 0.604, p90 114 / 122 (118 all), fit questions without a
# memory figure 46 + 30; with the card multi-node-startup-hang (labelled on the 11 dev questions it answers, 9 of
# which had no card): hit@3 0.799 / 0.837, hit@1 0.551 / 0.604 (8 questions gained, 3 zh lost).
# Stop 37: blind12 (52) moved into the dev set (1612; start engine, act model retrained: act 0.837 / 0.798, fidelity
# 0.955 / 0.915, 10 + 24 contradicted, 1 + 3 headlines, hit@3 0.796 / 0.837, hit@1 0.548 / 0.601). With the card model
# (rag/card_model.py, trained on this folder, so its dev hit figures are optimistic — grouped CV of the fused ranking is
# in bench/train_cards.py's report and the README): hit@3 0.916 / 0.952, hit@1 0.791 / 0.848; the rest unchanged. With
# a card the model ranks first also citable (rag.assistant.LEARNED_TOP): hit@3 0.962 / 0.980, hit@1 0.797 / 0.852.
# The honest dev figure is bench/eval_answers_cv.py (each file answered by a card model that never saw it): hit@3
# 0.839 / 0.876, hit@1 0.609 / 0.648. With the cards launcher-gpu-selection and slurm-tasks-per-gpu-launch (labelled
# on the 13 dev questions they answer, model retrained): hit@3 0.962 / 0.977, hit@1 0.794 / 0.847; cross-validated
# 0.836 / 0.874, 0.612 / 0.643.
# Stop 38: blind13 (52) moved into the dev set (1664; act and card models retrained): act 0.830 / 0.793, fidelity 0.953
# / 0.916, 16 + 23 contradicted, 1 + 3 headlines, 0 + 2 strawman, hit@3 0.964 / 0.979, hit@1 0.794 / 0.846. After the
# stop-38 readers (Lightning's and the deepspeed launcher's printed world size, "an A6000 * 8", "each has 4gpus" after
# named nodes, an OOM "even in batch size 1", AMP memory reported rather than believed), the load-time host-RAM figure
# and five cards: act 0.830 / 0.793, fidelity 0.953 / 0.916, 16 + 20 contradicted, 0 + 3 headlines, 0 strawman, hit@3
# 0.961 / 0.979, hit@1 0.790 / 0.845. With Chinese character bigrams in the card model (chosen on grouped CV, see
# rag.card_model.term_counts): hit@3 0.964 / 0.978, hit@1 0.806 / 0.849. End of stop 38 (wrapped and Rich-boxed
# tracebacks, config diffs, "一张卡已经被占用", "有4张卡 … 配置了3张"; models retrained): act 0.830 / 0.792, fidelity
# 0.953 / 0.917, 14 + 18 contradicted, 0 + 3 headlines, 0 strawman, hit@3 0.964 / 0.979, hit@1 0.808 / 0.848. With the
# visual-tokens card for a VL model's memory question (rag.assistant.VLM_CARD): hit@3 0.966 / 0.979, hit@1 0.809 / 0.849;
# with the GRPO-loss card's title no longer naming TRL as its subject (citing.title_stack_conflict had kept it from
# Tina #1, which names no stack), and its lead too (rag.opening kept the lead from opening): hit@3 0.966 / 0.981,
# hit@1 0.809 / 0.852. Fit questions without a memory figure 49 +
# 30 (blind13 brought 2 of them).
# Stop 39: blind14 (52) moved into the dev set (1716; start engine: act 0.830 / 0.786, fidelity 0.951 / 0.914, 17 + 22
# contradicted, 0 + 3 headlines, hit@3 0.965 / 0.979, hit@1 0.802 / 0.846). End of stop 39 (readers, models retrained on
# the 1716, the DataParallel and ms-swift device_map causes, the no-GPU card's gate): act 0.831 / 0.788, fidelity 0.954
# / 0.914, 14 + 20 contradicted, 0 + 3 headlines, 0 strawman, hit@3 0.970 / 0.981, hit@1 0.815 / 0.856, p90 114 / 122,
# fit questions without a memory figure 49 + 32.
# Stop 40: blind15 (52) moved into the dev set (1768 = 874 zh + 894 en; start engine, tag s22start: act 0.830 / 0.786,
# fidelity 0.951 / 0.912, 19 + 22 contradicted, 0 + 3 headlines, 0 strawman, hit@3 0.965 / 0.982, hit@1 0.803 /
# 0.854, fit without a figure 52 + 32). End of stop 40 (readers, citing gates, seven cards, models retrained on the
# 1768): act 0.833 / 0.786, fidelity 0.952 / 0.912, 17 + 21 contradicted, 0 + 3 headlines, 0 strawman, hit@3 0.968 /
# 0.983, hit@1 0.807 / 0.857, p90 114 / 122, fit without a figure 52 + 32.
# Stop 41: blind16 (52) moved into the dev set (1820 = 900 zh + 920 en; start engine, tag s23start: act 0.831 / 0.780,
# fidelity 0.952 / 0.910, 18 + 25 contradicted, 0 + 3 headlines, 0 strawman, hit@3 0.962 / 0.979, hit@1 0.802 /
# 0.855, fit without a figure 53 + 34). End of stop 41 (readers, DeepSpeed's ZeRO-2 verdict, three cards, ten relabels,
# models retrained on the 1820): act 0.832 / 0.783, fidelity 0.953 / 0.919, 16 + 20 contradicted, 0 + 3 headlines,
# 0 strawman, hit@3 0.970 / 0.982, hit@1 0.810 / 0.861, p90 114 / 122, fit without a figure 53 + 34.
# Stop 42, on the same 1820: a card may state the cause it gives (cause_zh / cause_en) when its title names a topic;
# diagnoses (by label) opening with "no known cause … matches this" 49 + 77 -> 11 + 16 (no_cause), the rest unchanged.
# Then blind17 (52) moved into the dev set (1872 = 926 zh + 946 en) and the act and card models were retrained on it:
# act 0.830 / 0.779, fidelity 0.950 / 0.918, 22 + 24 contradicted (blind17's own: 10), 0 + 3 headlines, 0 strawman,
# hit@3 0.970 / 0.981, hit@1 0.812 / 0.859, p90 114 / 120, fit without a figure 53 + 35, no cause 13 + 16.
# Readers from blind17's contradictions (tests/test_lead42_units.py): contradicted 22 + 24 -> 18 + 20, fidelity 0.951
# / 0.919; a tiny-batch question needs its effect sentence to name the batch: hit@1 0.813 / 0.860, hit@3 0.971 /
# 0.982, no cause 14 + 16; act model retrained after the readers: act 0.830 / 0.780, fit without a figure 53 + 34.
# Stop 43: blind18 (52) moved into the dev set (1924 = 952 zh + 972 en; start engine, tag s25start: act 0.826 / 0.774,
# fidelity 0.950 / 0.916, 20 + 26 contradicted (blind18's own: 8), 0 + 3 headlines, 0 strawman, hit@3 0.969 / 0.981,
# hit@1 0.809 / 0.855, p90 114 / 120, fit without a figure 55 + 36, no cause 14 + 17). End of stop 43 (readers from
# blind18's misses, three cards, eleven relabels, one label corrected, act and card models retrained on the 1924): act
# 0.826 / 0.773, fidelity 0.950 / 0.919, 20 + 23 contradicted, 0 + 1 headlines, 0 strawman, hit@3 0.973 / 0.983,
# hit@1 0.818 / 0.854, p90 115 / 120, fit without a figure 56 + 36, no cause 13 + 17.
# Stop 44: blind19 (52) moved into the dev set (1976 = 978 zh + 998 en; start engine, tag s26start: act 0.822 /
# 0.769, fidelity 0.948 / 0.915, 23 + 25 contradicted (blind19's own: 5), 1 + 1 headlines, 0 + 3 strawman (blind19's,
# two of them labels corrected to the dev set's precedent), hit@3 0.968 / 0.983, hit@1 0.808 / 0.842, p90 116 / 120,
# fit without a figure 58 + 38, no cause 13 + 17). End of stop 44 (readers from blind19's misses, eighteen GPU
# presets, six cards, sixteen relabels, act and card models retrained on the 1976): act 0.822 / 0.769, fidelity 0.950 /
# 0.920, 21 + 21 contradicted, 1 + 1 headlines, 0 strawman, hit@3 0.972 / 0.982, hit@1 0.818 / 0.847, p90 116 / 120,
# fit without a figure 58 + 38, no cause 13 + 17. The act floors and the fit-without-a-figure ceiling follow what the
# start engine already scored on the larger set.
# Stop 45: blind20 (52) moved into the dev set (2028 = 1004 zh + 1024 en; the start engine with the throughput
# calculator, which changes one first screen, and its models trained on the 1976: act 0.818 / 0.763, fidelity 0.949 /
# 0.917, 25 + 25 contradicted (blind20's own: 8), 1 + 1 headlines, 0 strawman, hit@3 0.967 / 0.980, hit@1 0.811 /
# 0.840, p90 116 / 120, fit without a figure 58 + 41, no cause 15 + 17). End of stop 45 (readers from blind20's
# contradictions, the Unsloth stack and the small-batch myth gated, one card, six relabels, act and card models
# retrained on the 2028): act 0.818 / 0.763, fidelity 0.950 / 0.918, 21 + 23 contradicted, 1 + 1 headlines, 0
# strawman, hit@3 0.974 / 0.984, hit@1 0.813 / 0.846, p90 117 / 120, fit without a figure 58 + 41, no cause 15 + 17.
# The act floors and the contradicted and fit-without-a-figure ceilings follow what the larger set scores.
# Stop 46: blind21 (52) moved into the dev set (2080 = 1030 zh + 1050 en; start engine, tag s28start, with its models
# trained on the 2028: act 0.811 / 0.761, fidelity 0.948 / 0.914, 23 + 32 contradicted (blind21's own: 11), 1 + 2
# headlines, 0 strawman, hit@3 0.970 / 0.982, hit@1 0.811 / 0.836, p90 117 / 120, fit without a figure 60 + 43, no
# cause 15 + 17). End of stop 46 (readers from blind21's misses, belief detection within a sentence, one card, five
# relabels, act and card models retrained on the 2080): act 0.813 / 0.760, fidelity 0.949 / 0.915, 21 + 24
# contradicted, 1 + 2 headlines, 0 strawman, hit@3 0.975 / 0.985, hit@1 0.827 / 0.860, p90 117 / 121, fit without a
# figure 59 + 42, no cause 16 + 17. The act floors follow what the larger set scores.
# Stop 47: blind22 (52) moved into the dev set (2132 = 1056 zh + 1076 en; start engine, tag s29start, with its models
# trained on the 2080: act 0.809 / 0.761, fidelity 0.949 / 0.914, 21 + 24 contradicted (blind22's own: 0), 1 + 2
# headlines, 0 strawman, hit@3 0.971 / 0.983, hit@1 0.821 / 0.857, p90 118 / 121, fit without a figure 59 + 42, no
# cause 17 + 18). End of stop 47 (myth cards as openings, readers from blind22 and the dev set's contradictions, three
# cards extended, act and card models retrained on the 2132): act 0.810 / 0.763, fidelity 0.949 / 0.914, 18 + 24
# contradicted, 1 + 2 headlines, 0 strawman, hit@3 0.973 / 0.984, hit@1 0.827 / 0.862, p90 117 / 121, fit without a
# figure 59 + 42, no cause 11 + 16. The Chinese act floor follows what the larger set scores (0.8097).
# Stop 48: blind23 (52) moved into the dev set (2184 = 1082 zh + 1102 en; start engine, tag s30start, with its models
# trained on the 2132: act 0.807 / 0.760, fidelity 0.947 / 0.913, 29 + 26 contradicted (blind23's own: 11 + 2), 1 + 2
# headlines, 0 strawman, hit@3 0.966 / 0.981, hit@1 0.821 / 0.854, p90 117 / 121, fit without a figure 62 + 45, no
# cause 12 + 17). End of stop 48 (readers from blind23's contradictions, where an OOM happened from its traceback, one
# card extended, act and card models retrained on the 2184): act 0.807 / 0.760, fidelity 0.950 / 0.915, 20 + 27
# contradicted, 1 + 2 headlines, 0 strawman, hit@3 0.973 / 0.983, hit@1 0.834 / 0.859, p90 118 / 122, fit without a
# figure 62 + 45 (blind23 brought 5 fit questions without one), no cause 12 + 16. The act floors follow what the
# larger set scores; the p90 ceiling leaves room for the OOM-phase causes (122 on English).
# Stop 49: blind24 (52) moved into the dev set (2236 = 1108 zh + 1128 en; start engine, tag s31start, with its models
# trained on the 2184: act 0.802 / 0.756, fidelity 0.948 / 0.913, 22 + 32 contradicted (blind24's own: 2 + 5), 1 + 2
# headlines, 0 strawman, hit@3 0.965 / 0.981, hit@1 0.824 / 0.854, p90 118 / 122, fit without a figure 63 + 47, no
# cause 13 + 17). End of stop 49 (readers from blind24's misses, the save phase of an OOM, two cards with their gates,
# act and card models retrained on the 2236): act 0.802 / 0.755, fidelity 0.950 / 0.914, 21 + 31 contradicted, 1 + 2
# headlines, 0 strawman, hit@3 0.974 / 0.984, hit@1 0.826 / 0.863, p90 118 / 122, fit without a figure 63 + 47, no
# cause 11 + 16. The Chinese hit@1 and English act floors and the contradicted ceiling follow what the larger set
# scores (blind24 brought 7 contradicted values of its own, 2 of them fixed).
# Stop 50: blind25 (52) moved into the dev set (2288 = 1134 zh + 1154 en; start engine, tag s32start, with its models
# trained on the 2236: act 0.800 / 0.748, fidelity 0.949 / 0.913, 22 + 35 contradicted, 1 + 2 headlines, 0 strawman,
# hit@3 0.970 / 0.976, hit@1 0.821 / 0.854, p90 118 / 122, fit without a figure 66 + 49, no cause 13 + 17). End of stop
# 50 (presets for Qwen v1 / Qwen1.5 / InternLM2 / LLaMA-1 / Baichuan-1, LoRA on an 8-bit base, readers from blind25, a
# card and a card extended, act and card models retrained on the 2288): act 0.802 / 0.750 (0.7496), fidelity 0.949 /
# 0.914, 21 + 32 contradicted, 2 + 2 headlines, 0 strawman, hit@3 0.973 / 0.982, hit@1 0.821 / 0.859, p90 118 / 122,
# fit without a figure 66 + 48, no cause 10 + 16. The English act floor and the fit-without-a-figure ceiling follow
# what the larger set scores (blind25 brought 5 fit questions without a figure).
# Stop 51: blind26 (52) moved into the dev set (2340 = 1160 zh + 1180 en; start engine, tag s33start, with its models
# trained on the 2288: act 0.797 / 0.746, fidelity 0.948 / 0.911, 23 + 38 contradicted, 2 + 2 headlines, 0 strawman,
# hit@3 0.970 / 0.978, hit@1 0.815 / 0.852, p90 118 / 122, fit without a figure 70 + 52, no cause 10 + 17). End of stop
# 51 (readers from blind26, ZeRO stages compared, the AMP card, presets by release month and R1 distills, act and card
# models retrained on the 2340): act 0.798 / 0.747, fidelity 0.949 / 0.914, 21 + 32 contradicted, 2 + 2 headlines, 0
# strawman, hit@3 0.974 / 0.983, hit@1 0.819 / 0.857, p90 117 / 122, fit without a figure 69 + 52, no cause 10 + 17.
# The Chinese act and hit@1 floors and the fit-without-a-figure ceiling follow what the larger set scores (blind26
# brought 4 + 4 fit questions without a figure).
# Stop 52: blind27 (52) moved into the dev set (2392 = 1186 zh + 1206 en; start engine, tag s34start, with its models
# trained on the 2340: act 0.790 / 0.745, fidelity 0.948 / 0.911, 26 + 35 contradicted, 2 + 2 headlines, 0 strawman,
# hit@3 0.969 / 0.980, hit@1 0.815 / 0.851, p90 117 / 121, fit without a figure 73 + 56, no cause 10 + 18). End of stop
# 52 (an OOM without its method opens with each method's model states, readers from blind27, published sizes, the
# gradient-checkpointing card's cause, act and card models retrained on the 2392): act 0.790 / 0.745 (0.7446),
# fidelity 0.949 / 0.912, 21 + 33 contradicted, 2 + 2 headlines, 0 strawman, hit@3 0.973 / 0.982, hit@1 0.819 / 0.861,
# p90 118 / 123, fit without a figure 68 + 49, no cause 8 + 13. The act floors follow what the larger set scores
# (the engine reads the act of 14 + 8 of blind27's 52 otherwise than labelled); the no-cause ceiling follows the fix.
# Stop 53: blind28 (52) moved into the dev set (2444 = 1212 zh + 1232 en; start engine, tag s35start, with its models
# trained on the 2392: act 0.786 / 0.740, fidelity 0.947 / 0.910, 25 + 36 contradicted, 2 + 2 headlines, 0 + 1
# strawman, hit@3 0.967 / 0.978, hit@1 0.811 / 0.851, p90 118 / 122, fit without a figure 72 + 54, no cause 9 + 13).
# End of stop 53 (readers and fit questions from blind28; no "does not fit" on assumed sharding for a run that trained
# until some samples; no arithmetic that restates one number; the pooling verdict where more GPUs are asked as the way
# out of an OOM; a saving the run showed is no belief to correct; act and card models retrained on the 2444): act
# 0.787 / 0.743, fidelity 0.949 / 0.911, 22 + 35 contradicted, 2 + 2 headlines, 0 strawman, hit@3 0.973 / 0.981,
# hit@1 0.817 / 0.858, p90 118 / 122, fit without a figure 72 + 53, no cause 8 + 12. The contradiction and
# fit-without-a-figure ceilings follow what the larger set scores (blind28 brought 4 + 3 and 4 + 5).
# Stop 54: blind29 (52) moved into the dev set (2496 = 1238 zh + 1258 en; start engine, tag s36start, with its models
# trained on the 2444: act 0.788 / 0.740, fidelity 0.948 / 0.908, 23 + 37 contradicted, 2 + 2 headlines, 0 strawman,
# hit@3 0.970 / 0.980, hit@1 0.814 / 0.852, p90 118 / 123, fit without a figure 73 + 55, no cause 8 + 12). End of stop
# 54 (readers from blind29, an OOM at the final save, no memory headline for a precision setting, Gemma 1 presets, act
# and card models retrained on the 2496): act 0.788 / 0.740, fidelity 0.949 / 0.912, 22 + 36 contradicted, 2 + 2
# headlines, 0 strawman, hit@3 0.973 / 0.981, hit@1 0.813 / 0.857, p90 118 / 123, fit without a figure 73 + 55, no
# cause 9 + 12. The Chinese hit@1 floor follows the card model retrained on the larger set.
# Stop 55: blind30 (52) moved into the dev set (2548 = 1264 zh + 1284 en; start engine, tag s37start, with its models
# trained on the 2496: act 0.789 / 0.736, fidelity 0.947 / 0.906, 24 + 43 contradicted, 2 + 2 headlines, 0 strawman,
# hit@3 0.970 / 0.979, hit@1 0.810 / 0.856, p90 118 / 123, fit without a figure 76 + 55, no cause 9 + 12). End of stop
# 55 (readers and openings from blind30, a learning rate still 0 or flat at its peak in the log, two cards, act and
# card models retrained on the 2548): act 0.788 / 0.735, fidelity 0.948 / 0.909, 22 + 36 contradicted, 2 + 2
# headlines, 0 strawman, hit@3 0.973 / 0.981, hit@1 0.814 / 0.862, p90 118 / 123, fit without a figure 76 + 55, no
# cause 9 + 11. The English act and fidelity floors and the fit-without-a-figure ceiling follow what the larger set
# scores (the engine reads the act of 12 of blind30's 26 English questions otherwise than labelled, and uses 0.724 of
# their stated values; blind30 brought 3 + 0 fit questions without a figure).
# Stop 56: blind31 (52) moved into the dev set (2600 = 1290 zh + 1310 en; start engine, tag s38start, with its models
# trained on the 2548: act 0.783 / 0.731, fidelity 0.947 / 0.908, 27 + 39 contradicted, 2 + 2 headlines, 0 + 1
# strawman, hit@3 0.972 / 0.978, hit@1 0.807 / 0.856, p90 118 / 123, fit without a figure 80 + 58, no cause 9 + 11).
# End of stop 56 (learning-rate scaling on the user's numbers, readers from blind31, act and card models retrained on
# the 2600): act 0.784 / 0.734, fidelity 0.948 / 0.908, 23 + 37 contradicted, 2 + 2 headlines, 0 strawman, hit@3
# 0.972 / 0.980 (0.9799), hit@1 0.816 / 0.857, p90 119 / 123, fit without a figure 80 + 58, no cause 9 + 11. The
# Chinese act floor, the English hit@3 floor and the fit-without-a-figure ceiling follow what the larger set scores
# (the engine reads the act of 12 + 11 of blind31's 52 otherwise than labelled; blind31 brought 4 + 3 fit questions
# without a figure).
# Stop 57: blind32 (52) moved into the dev set (2652 = 1316 zh + 1336 en; start engine, tag s39start, with its models
# trained on the 2600: act 0.783 / 0.731, fidelity 0.947 / 0.906, 24 + 42 contradicted, 2 + 2 headlines, 0 strawman,
# hit@3 0.967 / 0.977, hit@1 0.809 / 0.852, p90 118 / 123, fit without a figure 81 + 62, no cause 10 + 11). End of
# stop 57 (readers from blind32, the states-only opening of an OOM, five cards, act and card models retrained on the
# 2652): act 0.782 / 0.732, fidelity 0.947 / 0.907, 23 + 40 contradicted, 2 + 2 headlines, 0 strawman, hit@3 0.971 /
# 0.980, hit@1 0.812 / 0.853, p90 118 / 123, fit without a figure 81 + 61, no cause 8 + 11. The English
# hit@1 floor and the contradicted and fit-without-a-figure ceilings follow what the larger set scores (blind32 brought
# 1 + 5 contradicted values at the start, 0 + 3 now, and 1 + 4 fit questions without a figure).
# (stop 58: blind33 joined the dev set at act 0.462 / 0.615, hit@3 0.808 / 0.885 and 5 + 3 fit questions without a
# figure on the start engine, so the Chinese act and hit floors and the fit ceiling are re-based on the 2704)
# (stop 59: blind34 joined at act 0.654 / 0.462 on the start engine; the 2756 start at act 0.774 / 0.723 and end at
# 0.774 / 0.726, so the Chinese act floor is 0.77; the English first-screen p90 is 125 words, one more than before)
FLOORS = {
    "zh": {"act_accuracy": 0.77, "fidelity": 0.945, "hit3": 0.965, "hit1": 0.80},
    "en": {"act_accuracy": 0.725, "fidelity": 0.905, "hit3": 0.975, "hit1": 0.85},
}
CEILINGS = {
    "contradicted": 65,
    "assumed_headlines": 4,
    "strawman": 0,
    "first_words_p90": 125,
    "refused": 0,
    "fit_no_figure": 150,
    "no_cause": 24,
}

# The held-out set (tests/data/heldout_real, never used to tune the engine): a guard against regressions only.
# Since stop 29: blind4-zh/-en.yaml (89; one thread also mined into the dev set was removed), blind5-zh/-en.yaml (50)
# and blind6-zh/-en.yaml (52, mined in stop 29 before its changes), each mined by helpers who never saw the engine's
# code or answers. Start of stop 29 -> end, on these 191 (bench/eval_answers.py --dir tests/data/heldout_real): act
# 0.660 / 0.619 -> 0.691 / 0.639, values used 0.909 / 0.845 both, 20 contradicted both, hit@3 0.598 / 0.717 ->
# 0.573 / 0.739, hit@1 0.366 / 0.467 -> 0.317 / 0.467 (the six new cards of stop 29 displace expected ones on fresh
# Chinese questions), 0 headlines, 0 strawman, 1 refusal.
# Stop 31: held-out is blind6 + blind7 + blind8 (154; blind8 = 25 zh + 27 en, mined blind in stop 31 and scored on its
# start engine, tag s13start). End of stop 31: act 0.813 / 0.684, fidelity 0.906 / 0.842, 24 contradicted (blind8-en
# 10 of them), 3 headlines, 0 strawman, hit@3 0.725 / 0.770.
# Stop 32: held-out is blind8 + blind9 (104; blind9 = 25 zh + 27 en, mined blind at the start of stop 32 and scored on
# its start engine, tag s14start). Start -> end of stop 32 on these 104: act 0.740 / 0.611 both, fidelity 0.895 / 0.868
# both, 23 contradicted both, 2 headlines both, hit@3 0.776 -> 0.796 / 0.788 -> 0.808.
# Stop 33: blind8 moved into the dev set; held-out is blind9 + blind10 (104; blind10 = 25 zh + 27 en, mined blind at
# the start of stop 33 and scored on its start engine, tag s15start). Start -> end of stop 33 on these 104: act 0.640
# both / 0.574 -> 0.593, fidelity 0.858 / 0.794 both, 7 + 7 -> 7 + 8 contradicted, 0 headlines, 0 strawman, hit@3
# 0.721 / 0.827 both, hit@1 0.349 / 0.558 both.
# Stop 34: blind9 moved into the dev set; held-out is blind10 + blind11 (104; blind11 = 25 zh + 27 en, mined blind at
# the start of stop 34 and scored on its start engine, tag s16start). Start -> end of stop 34 on these 104: act 0.800 /
# 0.593 both, fidelity 0.908 / 0.809 both, 3 + 8 contradicted both, 0 headlines, 0 strawman, hit@3 0.674 / 0.774 both,
# hit@1 0.372 -> 0.395 / 0.547 -> 0.566; fit questions with no memory figure on the first screen 4 + 1 -> 2 + 1.
# Stop 35: blind10 moved into the dev set; held-out is blind11 + blind12 (104; blind12 = 25 zh + 27 en, mined blind at
# the start of stop 35 and scored on its start engine, tag s17start: act 0.60 / 0.593, 5 + 9 contradicted). Start of
# stop 35 on these 104: act 0.760 / 0.630, fidelity 0.940 / 0.845, 6 + 14 contradicted, 0 headlines, 0 strawman,
# hit@3 0.681 / 0.796, hit@1 0.426 / 0.519, fit questions with no memory figure 2 + 0.
# End of stop 35: act 0.780 / 0.630, fidelity 0.940 / 0.845, 5 + 14 contradicted, hit@3 0.681 / 0.796, hit@1 0.426 /
# 0.519.
# Stop 36: blind11 moved into the dev set; blind13 (52 = 25 zh + 27 en, mined blind at the start of stop 36 and scored
# on its start engine, tag s18start: act 0.68 / 0.63, 7 + 1 contradicted, 2 English strawman corrections) joined
# blind12. Start = end of stop 36 on these 104 (blind12 + blind13): act 0.660 / 0.611, fidelity 0.919 / 0.827, 12 + 10
# contradicted, 0 headlines, 2 strawman (en), hit@3 0.708 / 0.863, hit@1 0.417 / 0.588, fit without a figure 2 + 0.
# With the card multi-node-startup-hang: zh hit@3 0.688 (one question lost; held-out labels predate the card).
# Stop 37: blind12 moved into the dev set; blind14 (52 = 26 zh + 26 en, mined blind at the start of stop 37 and scored
# on its start engine, tag s19start: act 0.846 / 0.577, 3 + 4 contradicted, hit@3 0.885 / 0.826) joined blind13. Start
# of stop 37 on these 104 (blind13 + blind14): act 0.765 / 0.604, fidelity 0.898 / 0.840, 10 + 5 contradicted, 0
# headlines, 2 strawman (en), hit@3 0.784 / 0.872, hit@1 0.529 / 0.596, fit without a figure 1 + 2. With the card model
# (never trained on these): hit@3 0.824 / 0.894, hit@1 0.529 / 0.638; the rest unchanged. With LEARNED_TOP: hit@3
# 0.863 / 0.872, hit@1 0.549 / 0.638. With the two new cards: hit@3 0.863 / 0.851 (one English question; held-out
# labels predate the cards), hit@1 0.549 / 0.638.
# Stop 38: blind13 moved into the dev set; blind15 (52 = 26 zh + 26 en, mined blind at the start of stop 38 and scored
# on its start engine, tag s20start: act 0.769 / 0.731, fidelity 0.849 / 0.842, 5 + 2 contradicted, hit@3 0.800 /
# 0.960) joined blind14. Start of stop 38 on these 104 (blind14 + blind15): act 0.808 / 0.654, fidelity 0.880 / 0.830,
# 8 + 6 contradicted, 0 headlines, 0 strawman, hit@3 0.863 / 0.917, hit@1 0.529 / 0.688, fit without a figure 3 + 2.
# With the card model retrained on the 1664 dev questions, the stop-38 readers and five cards: hit@3 0.863 / 0.979,
# hit@1 0.510 / 0.688; the rest unchanged. With the bigrams (chosen on dev CV, which they lift by 0.003 / 0.009 hit@3):
# hit@3 0.843 / 0.958 (one question each lost), hit@1 0.510 / 0.708. With VLM_CARD: hit@3 0.863 / 0.958.
# Stop 39: blind14 moved into the dev set; blind16 (52 = 26 zh + 26 en, mined blind at the start of stop 39 and scored
# on its start engine, tag s21start: act 0.769 / 0.577, fidelity 0.938 / 0.844, 2 + 5 contradicted, hit@3 0.808 /
# 0.840) joined blind15. Start of stop 39 on these 104 (blind15 + blind16): act 0.769 / 0.654, fidelity 0.891 / 0.843,
# 7 + 7 contradicted, 0 headlines, 0 strawman, hit@3 0.804 / 0.920, hit@1 0.549 / 0.740, fit without a figure 4 + 2.
# End of stop 39 on these 104: act 0.769 / 0.654, fidelity 0.900 / 0.852, 6 + 6 contradicted, 0 headlines, 0 strawman,
# hit@3 0.784 / 0.920 (one Chinese question lost when the card model was retrained on the 1716), hit@1 0.529 / 0.760.
# Stop 40: blind15 moved into the dev set; blind17 (52 = 26 zh + 26 en, mined blind at the start of stop 40 and scored
# on its start engine, tag s22start: act 0.769 / 0.654, fidelity 0.883 / 0.856, 6 + 5 contradicted, hit@3 0.920 /
# 0.808) joined blind16. Start of stop 40 on these 104 (blind16 + blind17): act 0.769 / 0.615, fidelity 0.909 / 0.858,
# 7 + 9 contradicted, 0 headlines, 0 strawman, hit@3 0.843 / 0.824, hit@1 0.627 / 0.706, fit without a figure 2 + 3.
# End of stop 40 on these 104: act 0.769 / 0.615, fidelity 0.909 / 0.858, 7 + 9 contradicted, hit@3 0.843 / 0.843,
# hit@1 0.647 / 0.725 (the hit gains came with the card model retrained on the 1768), fit without a figure 2 + 3.
# Stop 41: blind16 moved into the dev set; blind18 (52 = 26 zh + 26 en, mined blind at the start of stop 41 and scored
# on its start engine, tag s23start: act 0.654 / 0.538, fidelity 0.897 / 0.740, 2 + 6 contradicted, hit@3 0.885 /
# 0.962) joined blind17. Start of stop 41 on these 104 (blind17 + blind18): act 0.712 / 0.596, fidelity 0.889 / 0.808,
# 8 + 11 contradicted, 0 headlines, 0 strawman, hit@3 0.902 / 0.904, hit@1 0.686 / 0.673, fit without a figure 3 + 3.
# End of stop 41 on these 104: act 0.712 / 0.596, fidelity 0.889 / 0.831, 8 + 10 contradicted, hit@3 0.902 / 0.885,
# hit@1 0.686 / 0.635 (the card model retrained with three new cards and ten relabels: 0.923 English hit@3 with the
# stop-40 card model), fit without a figure 3 + 3.
# Stop 42: blind17 moved into the dev set; blind19 (52 = 26 zh + 26 en, mined blind at the start of stop 42 and scored
# on its start engine, tag s24start: act 0.692 / 0.615, fidelity 0.872 / 0.714, 3 + 2 contradicted, 1 headline (zh),
# 3 strawman (en), hit@3 0.769 / 0.962) joined blind18. Start of stop 42 on these 104 (blind18 + blind19): act 0.673 /
# 0.577, fidelity 0.884 / 0.748, 5 + 8 contradicted, 1 headline, 3 strawman, hit@3 0.827 / 0.962, hit@1 0.615 / 0.519,
# fit without a figure 4 + 4, no cause 0 + 3. The headline and the strawman corrections are fresh failures this set
# found; they are guarded here, not tuned on.
# Stop 43: blind18 moved into the dev set; blind20 (52 = 26 zh + 26 en, mined blind at the start of stop 43 and scored
# on its start engine, tag s25start: act 0.654 / 0.500, fidelity 0.872 / 0.802, 4 + 4 contradicted, hit@3 0.808 /
# 0.923) joined blind19. Start of stop 43 on these 104 (blind19 + blind20): act 0.673 / 0.558, fidelity 0.876 / 0.767,
# 7 + 6 contradicted, 1 headline, 3 strawman, hit@3 0.808 / 0.942, hit@1 0.500 / 0.500, fit without a figure 2 + 5,
# no cause 2 + 0. End of stop 43: fidelity 0.876 / 0.773, hit@3 0.769 / 0.904, hit@1 0.481 / 0.500, the rest
# unchanged. The hit@3 loss is the three new cards (without them, and with the stop-42 card model, the end engine
# scores 0.808 / 0.942; with them and the stop-42 card model 0.769 / 0.923): a card written after a question was
# labelled can only take one of its three places. Floors are re-based on this set.
# Stop 44: blind19 moved into the dev set; blind21 (52 = 26 zh + 26 en, mined blind at the start of stop 44 and scored
# on its start engine, tag s26start: act 0.577 / 0.692, fidelity 0.832 / 0.747, 2 + 9 contradicted, 1 headline (en),
# hit@3 0.800 / 0.880) joined blind20. Start of stop 44 on these 104 (blind20 + blind21): act 0.615 / 0.596, fidelity
# 0.854 / 0.782, 6 + 13 contradicted, 0 + 1 headlines, 0 strawman, hit@3 0.784 / 0.863, hit@1 0.588 / 0.529, fit
# without a figure 2 + 5, no cause 2 + 0. End of stop 44: act 0.615 / 0.615, fidelity 0.873 / 0.782, hit@3 0.784 /
# 0.902, hit@1 0.608 / 0.510, the rest unchanged. Floors are re-based on this set (the start engine was already under
# the old Chinese act and fidelity floors and the English hit@3 floor).
# Stop 45: blind20 moved into the dev set; blind22 (52 = 26 zh + 26 en, mined blind at the start of stop 45 and scored
# on its start engine, tag s27start: act 0.654 / 0.808, fidelity 0.955 / 0.868, 0 + 0 contradicted, 0 headlines, 0
# strawman, hit@3 0.792 / 0.920) joined blind21. Start of stop 45 on these 104 (blind21 + blind22): act 0.615 / 0.750,
# fidelity 0.903 / 0.800, 2 + 9 contradicted, 0 + 1 headlines, 0 strawman, hit@3 0.796 / 0.900, hit@1 0.653 / 0.560,
# fit without a figure 2 + 2, no cause 1 + 2. End of stop 45: act 0.596 / 0.750, hit@3 0.816 / 0.880, the rest
# unchanged; both moves come with the act and card models retrained on the 2028 (before any other change of this stop
# they already scored act 0.596 and hit@3 0.816 / 0.880). Floors are re-based on this set.
# Stop 46: blind21 moved into the dev set; blind23 (52 = 26 zh + 26 en, mined blind at the start of stop 46 and scored
# on its start engine, tag s28start: act 0.692 / 0.654, fidelity 0.875 / 0.867, 10 + 2 contradicted, 0 headlines, 0
# strawman, hit@3 0.680 / 0.846) joined blind22. Start of stop 46 on these 104 (blind22 + blind23): act 0.673 / 0.731,
# fidelity 0.908 / 0.868, 10 + 2 contradicted, 0 headlines, 0 strawman, hit@3 0.735 / 0.863, hit@1 0.551 / 0.627, fit
# without a figure 3 + 3, no cause 2 + 3. End of stop 46: contradicted 11 + 2, hit@3 0.735 / 0.882, hit@1 0.592 /
# 0.647, no cause 2 + 2, the rest unchanged. Floors are re-based on this set.
# Stop 47: blind22 moved into the dev set; blind24 (52 = 26 zh + 26 en, mined blind at the start of stop 47 and scored
# on its start engine, tag s29start: act 0.615 / 0.577, fidelity 0.881 / 0.815, 2 + 5 contradicted, 0 headlines, 0
# strawman, hit@3 0.640 / 0.920) joined blind23. Start of stop 47 on these 104 (blind23 + blind24): act 0.654 / 0.615,
# fidelity 0.877 / 0.845, 13 + 7 contradicted, 0 headlines, 0 strawman, hit@3 0.660 / 0.882, hit@1 0.500 / 0.608, fit
# without a figure 4 + 5, no cause 2 + 2. End of stop 47: hit@3 0.660 / 0.863, hit@1 0.500 / 0.588, the rest
# unchanged. Floors are re-based on this set.
# Stop 48: blind23 moved into the dev set; blind25 (52 = 26 zh + 26 en, mined blind at the start of stop 48 and scored
# on its start engine, tag s30start: act 0.692 / 0.423, fidelity 0.901 / 0.827, 1 + 4 contradicted, 0 headlines, 0
# strawman, hit@3 0.800 / 0.640) joined blind24. Start of stop 48 on these 104 (blind24 + blind25): act 0.654 / 0.500,
# fidelity 0.892 / 0.821, 3 + 9 contradicted, 0 headlines, 0 strawman, hit@3 0.720 / 0.760, hit@1 0.480 / 0.540, fit
# without a figure 4 + 4, no cause 2 + 2. End of stop 48: hit@1 0.500 / 0.540, the rest unchanged. Floors are
# re-based on this set.
# Stop 49: blind24 moved into the dev set; blind26 (52 = 26 zh + 26 en, mined blind at the start of stop 49 and scored
# on its start engine, tag s31start: act 0.615 / 0.577, fidelity 0.920 / 0.780, 2 + 6 contradicted, 0 headlines, 0
# strawman, hit@3 0.800 / 0.769) joined blind25. Start of stop 49 on these 104 (blind25 + blind26): act 0.654 / 0.500,
# fidelity 0.909 / 0.795, 3 + 10 contradicted, 0 headlines, 0 strawman, hit@3 0.800 / 0.706, hit@1 0.580 / 0.471, fit
# without a figure 7 + 6, no cause 1 + 2. End of stop 49: hit@3 0.820 / 0.706, no cause 2 + 2, the rest unchanged.
# Floors are re-based on this set (the fit-without-a-figure ceiling too: blind26 brought 8 such questions).
# Stop 50: blind25 moved into the dev set; blind27 (52 = 26 zh + 26 en, mined blind at the start of stop 50 and scored
# on its start engine, tag s32start: act 0.423 / 0.692, fidelity 0.827 / 0.770, 5 + 3 contradicted, 0 headlines, 0
# strawman, hit@3 0.760 / 0.846) joined blind26. Start of stop 50 on these 104 (blind26 + blind27): act 0.519 / 0.635,
# fidelity 0.880 / 0.776, 7 + 9 contradicted, 0 headlines, 0 strawman, hit@3 0.800 / 0.808, hit@1 0.620 / 0.577, fit
# without a figure 8 + 8, no cause 0 + 2. End of stop 50: fidelity 0.880 / 0.786, hit@1 0.620 / 0.558, the rest
# unchanged. Floors are re-based on this set.
# Stop 51: blind26 moved into the dev set; blind28 (52 = 26 zh + 26 en, mined blind at the start of stop 51 and scored
# on its start engine, tag s33start: act 0.615 / 0.538, fidelity 0.789 / 0.830, 4 + 3 contradicted, 0 headlines, 0 + 1
# strawman, hit@3 0.682 / 0.769) joined blind27. Start of stop 51 on these 104 (blind27 + blind28): act 0.519 / 0.615,
# fidelity 0.808 / 0.800, 9 + 6 contradicted, 0 headlines, 0 + 1 strawman, hit@3 0.723 / 0.808, hit@1 0.553 / 0.500,
# fit without a figure 8 + 9, no cause 1 + 1. End of stop 51: hit@3 0.702 / 0.808, hit@1 0.532 / 0.500 (one Chinese
# question each, lost when the card model was retrained on the 2340), the rest unchanged. Floors are re-based on this
# set.
# Stop 52: blind27 moved into the dev set; blind29 (52 = 26 zh + 26 en, mined blind at the start of stop 52 and scored
# on its start engine, tag s34start: act 0.808 / 0.615, fidelity 0.917 / 0.778, 1 + 2 contradicted, 0 headlines, 0
# strawman, hit@3 0.846 / 0.917) joined blind28. Start of stop 52 on these 104 (blind28 + blind29): act 0.712 / 0.577,
# fidelity 0.866 / 0.803, 5 + 5 contradicted, 0 headlines, 0 + 1 strawman, hit@3 0.750 / 0.840, hit@1 0.542 / 0.480,
# fit without a figure 5 + 7, no cause 1 + 0. End of stop 52: hit@1 0.521 / 0.440, the rest unchanged. Floors are
# re-based on this set.
# Stop 53: blind28 moved into the dev set; blind30 (52 = 26 zh + 26 en, mined blind at the start of stop 53 and scored
# on its start engine, tag s35start: act 0.846 / 0.538, fidelity 0.861 / 0.644, 2 + 7 contradicted, 0 headlines, 0
# strawman, hit@3 0.762 / 0.885) joined blind29. Start of stop 53 on these 104 (blind29 + blind30): act 0.827 / 0.577,
# fidelity 0.889 / 0.712, 3 + 9 contradicted, 0 headlines, 0 strawman, hit@3 0.809 / 0.900, hit@1 0.638 / 0.620, fit
# without a figure 4 + 2, no cause 0 + 0. End of stop 53: hit@1 0.638 / 0.660, the rest unchanged. Floors are re-based
# on this set.
# Stop 54: blind29 moved into the dev set; blind31 (52 = 26 zh + 26 en, mined blind at the start of stop 54 and scored
# on its start engine, tag s36start: act 0.538 / 0.538, fidelity 0.884 / 0.833, 5 + 3 contradicted, 0 headlines, 0 + 1
# strawman, hit@3 0.923 / 0.880) joined blind30. Start of stop 54 on these 104 (blind30 + blind31): act 0.692 / 0.538,
# fidelity 0.873 / 0.737, 7 + 10 contradicted, 0 headlines, 0 + 1 strawman, hit@3 0.872 / 0.882, hit@1 0.596 / 0.647,
# fit without a figure 7 + 3, no cause 0 + 0. End of stop 54: fidelity 0.873 / 0.743, hit@3 0.851 / 0.863, hit@1
# 0.553 / 0.667 (one question each lost from the top 3 when the card model was retrained on the 2496), the rest
# unchanged. Floors are re-based on this set.
# Stop 55: blind30 moved into the dev set; blind32 (52 = 26 zh + 26 en, mined blind at the start of stop 55 and scored
# on its start engine, tag s37start: act 0.731 / 0.577, fidelity 0.878 / 0.795, 1 + 5 contradicted, 0 headlines, 0
# strawman, hit@3 0.769 / 0.846) joined blind31. Start of stop 55 on these 104 (blind31 + blind32): act 0.635 / 0.558,
# fidelity 0.881 / 0.814, 6 + 8 contradicted, 0 headlines, 0 + 1 strawman, hit@3 0.827 / 0.843, hit@1 0.481 / 0.569,
# fit without a figure 5 + 7, no cause 1 + 0. End of stop 55: hit@3 0.808 / 0.824, hit@1 0.500 / 0.608 (one question
# each lost from the top 3 when the card model was retrained on the 2548 with two more cards), the rest unchanged.
# Floors are re-based on this set.
# Stop 56: blind31 moved into the dev set; blind33 (52 = 26 zh + 26 en, mined blind at the start of stop 56 and scored
# on its start engine, tag s38start: act 0.462 / 0.615, fidelity 0.881 / 0.822, 1 + 1 contradicted, 0 headlines, 0
# strawman, hit@3 0.808 / 0.885) joined blind32. Start of stop 56 on these 104 (blind32 + blind33): act 0.596 / 0.596,
# fidelity 0.879 / 0.809, 2 + 6 contradicted, 0 headlines, 0 strawman, hit@3 0.769 / 0.865, hit@1 0.577 / 0.673, fit
# without a figure 6 + 7, no cause 2 + 0. End of stop 56: hit@3 0.788 / 0.885, hit@1 0.577 / 0.635, the rest
# unchanged. Floors are re-based on this set.
# Stop 57: blind32 moved into the dev set; blind34 (52 = 26 zh + 26 en, mined blind at the start of stop 57 and scored
# on its start engine, tag s39start: act 0.654 / 0.462, fidelity 0.800 / 0.677, 0 + 2 contradicted, 0 headlines, 0
# strawman, hit@3 0.760 / 0.923) joined blind33. Start of stop 57 on these 104 (blind33 + blind34): act 0.558 / 0.538,
# fidelity 0.842 / 0.763, 1 + 3 contradicted, 0 headlines, 0 strawman, hit@3 0.804 / 0.923, hit@1 0.627 / 0.673, fit
# without a figure 7 + 4, no cause 1 + 1. End of stop 57: hit@3 0.784 / 0.904, hit@1 0.608 / 0.635 (one or two
# questions per language lost from the top ranks when the card model was retrained on the 2652 with five more cards),
# the rest unchanged. Floors are re-based on this set.
# Stop 58: blind33 moved into the dev set; blind35 (52 = 26 zh + 26 en, mined blind at the start of stop 58 and scored
# on its start engine, tag s40start: act 0.692 / 0.462, fidelity 0.873 / 0.900, 1 + 1 contradicted, 0 headlines, 0
# strawman, hit@3 0.880 / 0.923) joined blind34. Start of stop 58 on these 104 (blind34 + blind35): act 0.673 / 0.462,
# fidelity 0.836 / 0.765, 1 + 3 contradicted, 0 headlines, 0 strawman, hit@3 0.820 / 0.923, hit@1 0.520 / 0.577, fit
# without a figure 8 + 3, no cause 1 + 1. End of stop 58: hit@3 0.860 / 0.885, hit@1 0.560 / 0.538 (the card model
# retrained on the 2704 with three more cards), the rest unchanged. Floors are re-based on this set, hit@3 one question
# below it (the card model's retraining moves a question or two).
# Stop 59: blind34 moved into the dev set; blind36 (52 = 26 zh + 26 en, mined blind at the start of stop 59 and scored
# on its start engine, tag s41start: act 0.577 / 0.538, fidelity 0.875 / 0.784, 2 + 6 contradicted, 1 + 0 headlines,
# 0 strawman, hit@3 0.846 / 0.846) joined blind35. Start of stop 59 on these 104 (blind35 + blind36): act 0.635 /
# 0.500, fidelity 0.874 / 0.835, 3 + 7 contradicted, 1 + 0 headlines, 0 strawman, hit@3 0.863 / 0.865, hit@1 0.569 /
# 0.558, fit without a figure 9 + 5, no cause 2 + 1. End of stop 59: fidelity 0.874 / 0.846, hit@3 0.843 / 0.846,
# hit@1 0.549 / 0.519, no cause 3 + 1 (the card model retrained on the 2756 with two more cards), the rest unchanged.
# Floors are re-based on this set, hit@3 one question below it.
HELDOUT_FLOORS = {
    "zh": {"act_accuracy": 0.63, "fidelity": 0.87, "hit3": 0.82},
    "en": {"act_accuracy": 0.50, "fidelity": 0.84, "hit3": 0.82},
}
HELDOUT_CEILINGS = {
    "contradicted": 10,
    "assumed_headlines": 1,
    "strawman": 1,
    "refused": 0,
    "fit_no_figure": 14,
    "no_cause": 4,
}


@pytest.fixture(scope="module")
def bot():
    from rag import Assistant

    return Assistant()


@pytest.fixture(scope="module")
def summary(bot):
    return summarise(evaluate(load_dev_set(), bot))


def test_dev_set_size():
    questions = load_dev_set()
    assert len(questions) >= 150
    assert sum(q["lang"] == "zh" for q in questions) >= 60
    assert all(q["source"].startswith("http") for q in questions)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_floors_per_language(summary, lang):
    got = summary[lang]
    for metric, floor in FLOORS[lang].items():
        assert got[metric] >= floor, f"{lang} {metric}: {got[metric]:.3f} < {floor}"


def test_ceilings(summary):
    got = summary["all"]
    for metric, ceiling in CEILINGS.items():
        assert got[metric] <= ceiling, f"{metric}: {got[metric]} > {ceiling}"


@pytest.fixture(scope="module")
def heldout_summary(bot):
    return summarise(evaluate(load_dev_set(Path(__file__).parent / "data" / "heldout_real"), bot))


def test_heldout_floors(heldout_summary):
    for lang, floors in HELDOUT_FLOORS.items():
        for metric, floor in floors.items():
            got = heldout_summary[lang][metric]
            assert got >= floor, f"held-out {lang} {metric}: {got:.3f} < {floor}"
    for metric, ceiling in HELDOUT_CEILINGS.items():
        got = heldout_summary["all"][metric]
        assert got <= ceiling, f"held-out {metric}: {got} > {ceiling}"
