"""Learning benchmark in the knowledge-base world (DESIGN.md §6): `python -m bench.learning`.

The research pipeline in miniature, from scratch on this machine's CPU, built to show (or fail to
show, with reasons) the ΔBelief-RL paper's ordering SFT < StarPO < CIA on held-out secrets:
1. world (`world.py`): a seeded pool of knowledge-base nouns split into SFT, RL, validation and
   test secrets; no game-format row about a validation or test secret reaches SFT or GRPO;
2. a tiny Llama built from scratch (training.tiny) and the knowledge stage (training.knowledge) on
   every pool word, test words included: what a real model knows from pretraining (shared by
   every seed);
3. per training seed (`stages.py`): SFT on an imperfect information-gain teacher's games (it
   draws questions ∝ exp(score / T), so the SFT start leaves strategy to improve), with recovery
   rows and naming rows for the RL secrets; then GRPO from that SFT model twice, StarPO
   (trajectory advantages, λ = 0) and CIA (per-turn advantages with ΔBelief, λ = 0.1), with the
   reference's reward assembly and defaults;
4. evaluation (`evaluate.py`) against the closed-world KB judge: mean@8 at temperature 1 on the
   test secrets (the paper's metric) and on the validation secrets (where settings are chosen),
   success under the rule played (`reference`) and the `strict` rule, valid questions, bits the
   answers gained of log2(pool), games that reached ≤ 2 candidates, naming apart from narrowing;
5. the ordering (`ordering.py`): each arm's success over seeds and the paired differences with
   bootstrap intervals over test words and seeds.
Every stage's result is stored in --work; `--resume` continues an interrupted run. Prints one
JSON object and writes bench/results/learning.json; `--table` prints the README's table from it.
"""

from bench.learning.evaluate import consistency, guess_questions, summarise_games

__all__ = ["consistency", "guess_questions", "summarise_games"]
