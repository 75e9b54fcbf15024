"""Batched beam search over grammar states (beam_size hypotheses per sentence, scored together)."""

import torch

from toolkit.decoding.memory import free_bytes, hypothesis_bytes, out_of_memory, row_bytes, size_text
from toolkit.decoding.search import Doubted, Search, as_rows
from toolkit.errors import ConfigurationError
from toolkit.execution import Denotation, Executor
from toolkit.execution.answer_kinds import AnswerKinds
from toolkit.from_params import PositiveInt, Probability


class BeamTooWide(ConfigurationError):
    """A beam that does not fit in memory for the inputs decoded together: fewer at once may fit
    (:func:`toolkit.evaluation.predict` halves its batch before it gives up).
    """


class Readings(list):
    """One sentence's finished hypotheses, best first, and each one's *share*: its probability over theirs
    (the softmax of their log-probabilities), how much of what the beam found the model puts on it.
    """

    def __init__(self, hypotheses: list, shares: list[float]):
        super().__init__(hypotheses)
        self.shares = shares


@Search.register("beam")
class BeamSearch(Search):
    """Keeps the *beam_size* best partial outputs per sentence, and no more than exist.

    The beam widens step by step to as many hypotheses as the best candidates that can still be
    extended, up to *beam_size*: a grammar that allows few outputs keeps a wide beam narrow, and
    every tensor of a step is as wide as the beam is, not as *beam_size*. A beam too wide for the
    memory free is refused in one line before it grows (:mod:`toolkit.decoding.memory`).

    Finished hypotheses carry their score forward unchanged, and only the open ones are decoded:
    the model's context holds a row per open hypothesis, in whatever order moves fewest rows
    (:func:`keep_rows`). The winner among finished
    hypotheses is chosen by score / lp(length), with GNMT's ``lp = ((5 + length) / 6) ** length_penalty``
    (Wu et al., 2016); ``length_penalty = 0`` ranks by raw log-probability.

    With *early_stopping* a sentence stops once its best-scoring hypothesis is finished, as in
    OpenNMT: no open hypothesis can overtake it in log-probability, and without the rule a
    sentence with fewer than *beam_size* plausible outputs keeps extending unlikely ones until the
    grammar forces them to end (up to ``max_nodes`` steps for a tree codec). Left out (``None``),
    it is on except under execution guidance.

    With *execution_guided* (an :class:`~toolkit.execution.Executor`, e.g. ``{"type":
    "geoquery_prolog"}``) the search passes over finished hypotheses whose result fails to execute
    or answers nothing, and takes the best one that answers (execution-guided decoding, Wang et al.,
    2018): a parser's second-best query is often right where its best one is not even a query the
    database can run, and only execution tells them apart. Where none answers, the best stays, so
    guidance never loses an output. ``guided_changes`` counts the inputs whose choice it changed.
    Guidance decodes each sentence until its beam is all finished hypotheses, unless
    *early_stopping* is set: stopping when the best one finishes drops the open alternatives it is
    there to choose among (on GEO at beam 5: 83.6 denotation accuracy with them, 79.6 without).

    Under guidance, *answer_kinds* (e.g. ``{"type": "geo_english"}``, :mod:`toolkit.execution.answer_kinds`)
    passes over a hypothesis whose answer is not of the kind its question asks for ("how many": a
    number), and *abstain* over one that names an entity its question does not name (the grammar's
    states say which: :meth:`~toolkit.grammars.anonymized.RestoringState.unnamed`); with *abstain*,
    where no hypothesis is left the predictor says it cannot answer (``answer_error``) instead of
    giving the best one's answer, which the search still returns, for metrics to score.
    ``abstentions`` counts those inputs. With *abstain* and *min_confidence*, the reading taken must also
    hold at least that share of the probability of the beam's finished readings (:class:`Readings`):
    where it holds less, the model is unsure what the question asks, and the predictor abstains
    (the search returns the reading :class:`~toolkit.decoding.search.Doubted`). On GEO's fresh
    questions a reading taken with a share under one half was wrong far more often than right.

    ``--beam-size`` changes only the size of an archive's beam and keeps all of the above
    (:func:`search_with_beam`).

    Where the grammar has a tensor form of its states (the dependency transition systems), the hypotheses are
    rows of it, reordered and advanced by tensor operations on the model's device (*tensor_states* ``false``:
    on Python states, the same parses).
    """

    def __init__(
        self,
        beam_size: PositiveInt = 5,
        length_penalty: float = 1.0,
        max_steps: PositiveInt | None = None,
        use_cache: bool = True,
        early_stopping: bool | None = None,
        execution_guided: Executor | None = None,
        answer_kinds: AnswerKinds | None = None,
        abstain: bool = False,
        min_confidence: Probability = 0.0,
        tensor_states: bool = True,
    ):
        super().__init__(max_steps, use_cache)
        self.on_tensors = tensor_states
        self.beam_size, self.length_penalty, self.early_stopping = beam_size, length_penalty, early_stopping
        self.execution_guided, self.guided_changes = execution_guided, 0
        self.answer_kinds, self.abstain, self.abstentions = answer_kinds, abstain, 0
        self.min_confidence = min_confidence

    @property
    def hypotheses_per_input(self) -> int:
        return self.beam_size

    searches_tensors = True

    def search(self, model, batch, states, limits=None):
        ranked = self.ranked(model, batch, states, limits)
        if self.execution_guided is not None:
            return self.guide(ranked)
        return [self.doubted(hypotheses, 0) for hypotheses in ranked]

    def ranked(self, model, batch, states, limits=None) -> list[list]:
        """Each sentence's finished hypotheses, best first (see :meth:`ranking`); *limits*: each sentence's step limit.

        A beam this wide cannot fit in memory: a ``ConfigurationError`` in one line (see :meth:`check_fits`),
        as is an allocation that fails (never a ``RuntimeError`` from deep inside torch).
        """
        rows = len(states)
        try:
            return self._ranked(model, batch, states, limits)
        except Exception as error:
            if not out_of_memory(error):
                raise
            del error  # its traceback holds the tensors: let them go before anything else is allocated
        raise BeamTooWide(f"decoding {rows} input(s) ran out of memory with a beam of {self.beam_size:,} (beam_size, --beam-size): a smaller beam needs less")

    def _ranked(self, model, batch, states, limits=None) -> list[list]:
        beam = self.beam_size
        limits = [self.max_steps] * len(states) if limits is None else limits
        device = batch["source"].device
        # The beam is as wide as it needs to be, never more than beam_size: `width` hypotheses per
        # sentence, as many as the best candidates that can still be extended (the grammar allows
        # few symbols at first, and a small grammar few outputs at all), so memory follows the
        # hypotheses that exist, not the beam asked for.
        width = 1
        hypotheses = as_rows(model, states)
        scores = torch.zeros(len(states), width, device=device)
        lengths = torch.zeros(len(states), width, device=device)
        prefix = torch.full((len(states), 1), model.bos_index, dtype=torch.long, device=device)
        sentences = list(range(len(states)))  # the input position of each sentence still decoding
        winners: list[list] = [[] for _ in range(len(states))]
        # The model decodes only the open hypotheses (neither finished nor dead): a finished one
        # extends by padding at no cost, and on tree codecs a third of the rows are finished.
        # slot[r] is hypothesis r's row in the context (-1: none); `reading` is the sentence whose
        # source each context row reads.
        free = free_bytes(device)  # before the search takes any: what the widest beam is measured against
        context = model.start_decoding(batch, self.use_cache)  # one row per sentence, its first hypothesis's
        per_input = row_bytes(context, len(states))
        slot, reading = torch.arange(len(states), device=device), torch.arange(len(states), device=device)
        early_stopping = self.early_stopping if self.early_stopping is not None else self.execution_guided is None
        for step in range(max(limits, default=0)):
            final = hypotheses.finished().to(device).view(-1, width)  # (B, W)
            if early_stopping:  # drop the open hypotheses of sentences whose best one is finished
                done = final.gather(1, scores.argmax(dim=1, keepdim=True))  # (B, 1)
                scores = scores.masked_fill(done & ~final, float("-inf"))
            at_limit = torch.tensor([step >= limits[sentence] for sentence in sentences], device=device)
            finished = (final | ~torch.isfinite(scores)).all(dim=1) | at_limit  # (B,): nothing left to extend, or no step left
            if finished.any():  # such sentences leave the batch, so later steps run on fewer rows
                rows_now = hypotheses.rows()
                for row in finished.nonzero().flatten().tolist():
                    winners[sentences[row]] = self.readings(rows_now[row * width : (row + 1) * width], scores[row], final[row], lengths[row])
                keep = (~finished).nonzero().flatten()
                if len(keep) == 0:
                    return winners
                rows = (keep[:, None] * width + torch.arange(width, device=device)).view(-1)
                sentences = [sentences[i] for i in keep.tolist()]
                hypotheses = hypotheses.select(rows)
                scores, final, lengths, prefix, slot = scores[keep], final[keep], lengths[keep], prefix[rows], slot[rows]
            batch_size, final = len(sentences), final.view(-1)
            live = (~final & torch.isfinite(scores.view(-1))).nonzero().flatten()  # never empty: finished sentences left
            context, reading, order = keep_rows(context, slot[live], reading)
            live = live[order]  # in the context's row order
            live_states = hypotheses.select(live)
            live_log_probs, context = model.decode_step(prefix[live], context, live_states)  # (M, V)
            log_probs = live_log_probs.new_full((len(hypotheses), live_log_probs.size(-1)), float("-inf"), dtype=torch.float)
            log_probs[live] = live_log_probs.float().masked_fill(~live_states.allowed_mask(), float("-inf"))
            log_probs[final, model.pad_index] = 0.0  # a finished hypothesis extends only by padding, at no cost
            vocab_size = log_probs.size(-1)
            candidates = (scores.view(-1, 1) + log_probs).view(batch_size, width * vocab_size)
            widened = min(beam, max(int(torch.isfinite(candidates).sum(dim=1).max()), 1))
            if widened > width:
                steps = max(limits[sentence] for sentence in sentences)
                self.check_fits(widened, batch_size, hypothesis_bytes(per_input, batch["source"].size(-1), steps, vocab_size), free, steps, device)
            scores, chosen = candidates.topk(widened, dim=-1)  # (B, W')
            source = (torch.arange(batch_size, device=device)[:, None] * width + chosen // vocab_size).view(-1)
            extend = torch.isfinite(scores.view(-1)) & ~final[source]
            hypotheses = hypotheses.select(source).apply((chosen % vocab_size).view(-1), moving=extend)
            lengths = lengths.view(-1)[source].view(batch_size, widened) + (~final[source]).float().view(batch_size, widened)
            prefix = torch.cat([prefix[source], (chosen % vocab_size).view(-1, 1)], dim=1)
            row_of_live = torch.full_like(slot, -1)
            row_of_live[live] = torch.arange(len(live), device=device)
            slot = row_of_live[source]  # a live hypothesis always extends a live one (its score is finite, it was not final)
            width = widened
        final, rows_now = hypotheses.finished().to(device).view(-1, width), hypotheses.rows()
        for row, sentence in enumerate(sentences):  # the longest limit reached
            winners[sentence] = self.readings(rows_now[row * width : (row + 1) * width], scores[row], final[row], lengths[row])
        return winners

    def readings(self, beam: list, scores: torch.Tensor, final: torch.Tensor, lengths: torch.Tensor) -> Readings:
        """One sentence's *beam* of hypotheses as :class:`Readings`, in :meth:`ranking`'s order."""
        order = self.ranking(scores, final, lengths)
        return Readings([beam[k] for k in order], scores[order].float().softmax(0).tolist())

    def check_fits(self, width: int, inputs: int, per_hypothesis: int, free: int | None, steps: int, device: torch.device) -> None:
        """Refuse, in one line, to widen the beam to *width* hypotheses for each of *inputs* when they would need
        more memory than was *free* when the batch began (about *per_hypothesis* bytes each, up to *steps* steps).
        """
        needed = width * inputs * per_hypothesis
        if free is None or needed <= free:
            return
        fits = free // (inputs * per_hypothesis)
        advice = f"a beam of at most {fits:,} fits" if fits else f"not even one hypothesis per input fits for {inputs} input(s) at once"
        raise BeamTooWide(
            f"a beam of {self.beam_size:,} (beam_size, --beam-size) does not fit in memory: {width:,} hypotheses for each of {inputs} input(s), "
            f"up to {steps:,} steps, take about {size_text(per_hypothesis)} each, {size_text(needed)} in all, and {size_text(free)} was free on {device.type}; {advice}"
        )

    @classmethod
    def check_size(cls, beam_size: int | None) -> None:
        """Refuse a bad ``--beam-size`` or ``load_predictor(beam_size=...)`` as the config's ``beam_size`` is refused
        (0, -1 or "3" is one error naming it), before any archive is loaded; ``None`` (the model's own search) passes.
        """
        if beam_size is not None:
            cls.from_params({"beam_size": beam_size})

    def copied(self) -> "BeamSearch":
        copied = super().copied()
        copied.guided_changes = copied.abstentions = 0
        return copied

    def resized(self, beam_size: int) -> "BeamSearch":
        """A copy of this beam with *beam_size* hypotheses and all else it has (executor, answer kinds, abstention,
        *min_confidence*, length penalty, limits, early stopping), its counts at 0: a size that dropped the
        checks answered the questions the archive abstains on. The model's own search is left as it was.
        """
        self.check_size(beam_size)
        resized = self.copied()
        resized.beam_size = beam_size
        return resized

    def guided_by(self, executor: Executor) -> "BeamSearch":
        """A copy of this beam that chooses by *executor* (``--execution-guided``), its counts at 0;
        the model's own search is left as it was.
        """
        guided = self.copied()
        guided.execution_guided = executor
        return guided

    def ranking(self, scores: torch.Tensor, final: torch.Tensor, lengths: torch.Tensor) -> list[int]:
        """The beams of one sentence, best first: its finished ones by length-penalised score; with
        none finished (its step limit reached), the best raw score alone. The first is the winner.
        """
        if not final.any():
            return [int(scores.argmax())]
        penalty = ((5.0 + lengths) / 6.0) ** self.length_penalty
        penalised = (scores / penalty).masked_fill(~final, float("-inf"))
        order = penalised.argsort(descending=True, stable=True)  # ties in beam order, as argmax breaks them
        return order[: max(int(torch.isfinite(penalised).sum()), 1)].tolist()

    def guide(self, ranked: list[list]) -> list:
        """Each sentence's first hypothesis that answers (see :meth:`problem`) with a non-empty answer, else its first.

        The executor is asked rank by rank, one call for all the sentences still undecided: most
        best hypotheses answer, so the others (some slow or pathological) are seldom run at all.
        """
        chosen: list = [None] * len(ranked)
        best: list[Denotation | None] = [None] * len(ranked)  # what each sentence's first hypothesis answered
        for rank in range(max(map(len, ranked), default=0)):
            asking = [i for i, hypotheses in enumerate(ranked) if chosen[i] is None and rank < len(hypotheses)]
            if not asking:
                break
            for i, denotation in zip(asking, self.execution_guided.execute([ranked[i][rank].result() for i in asking])):
                best[i] = denotation if rank == 0 else best[i]
                if denotation.answers and self.problem(ranked[i][rank], denotation) is None:
                    chosen[i] = ranked[i][rank]
        self.guided_changes += sum(state is not None and state is not hypotheses[0] for state, hypotheses in zip(chosen, ranked))
        if self.abstain:  # where none answers, the first stays; it is an answer only if it ran and fits, empty as it is
            self.abstentions += sum(
                state is None and (denotation is None or self.problem(hypotheses[0], denotation) is not None)
                for state, denotation, hypotheses in zip(chosen, best, ranked)
            )
        taken = [
            hypotheses[0] if state is None else self.doubted(hypotheses, next(rank for rank, reading in enumerate(hypotheses) if reading is state))
            for state, hypotheses in zip(chosen, ranked)
        ]
        self.abstentions += sum(isinstance(state, Doubted) for state in taken)
        return taken

    def doubted(self, readings: list, rank: int):
        """The reading at *rank*, :class:`~toolkit.decoding.search.Doubted` where it holds less than *min_confidence* of the
        probability of *readings* (with *abstain*; see the class docstring).
        """
        reading, shares = readings[rank], getattr(readings, "shares", None)
        if not (self.abstain and self.min_confidence and shares) or shares[rank] >= self.min_confidence:
            return reading
        share = f"{shares[rank]:.0%}" if shares[rank] >= 0.005 else "under 1%"
        return Doubted(
            reading, f"I am not sure what the question asks (my reading of it has {share} of my confidence; I answer from {self.min_confidence:.0%})"
        )

    def problem(self, state, denotation: Denotation) -> str | None:
        """Why the answer *denotation* of hypothesis *state* is no answer to its question, or ``None``: it failed to
        run; it names an entity the question does not, or leaves out one the question names (with *abstain*;
        :meth:`RestoringState.unnamed`, :meth:`RestoringState.unused`); it is not of the kind the question asks
        for (with *answer_kinds*, where the state holds the question).
        """
        if not denotation.ok:
            return str(denotation)
        unnamed, unused = getattr(state, "unnamed", None), getattr(state, "unused", None)
        if self.abstain and unnamed is not None and (kinds := unnamed()):
            return f"the question names no {', '.join(kinds)}"
        if self.abstain and unused is not None and (left_out := unused()):
            return f"the reading leaves out {', '.join(repr(words) for words in left_out)}, which the question names"
        question = getattr(state, "question", None)
        return self.answer_kinds.problem(question, denotation) if self.answer_kinds is not None and question else None


def search_with_beam(search: Search | None, beam_size: int | None) -> Search | None:
    """What ``--beam-size`` (``load_predictor(beam_size=...)``) decodes with over a model whose own search is *search*.

    ``None`` (the model's own search, as it is) where *beam_size* is ``None``. A beam keeps everything
    the archive configured but its size (:meth:`BeamSearch.resized`); a greedy search becomes a beam with
    its step limit and cache; no search at all (a tagger's) a plain beam. A bad size fails as
    :meth:`BeamSearch.check_size` says.
    """
    BeamSearch.check_size(beam_size)
    if beam_size is None:
        return None
    if isinstance(search, BeamSearch):
        return search.resized(beam_size)
    if search is None:
        return BeamSearch(beam_size)
    return BeamSearch(beam_size, max_steps=search.max_steps if search.fixed_steps else None, use_cache=search.use_cache, tensor_states=search.on_tensors)


def keep_rows(context, sources: torch.Tensor, reading: torch.Tensor) -> tuple:
    """*context* with a row for each of M hypotheses, the row of context row ``sources[i]`` for the i-th.

    Row order is free, since the search knows which row is whose: the first hypothesis of each
    context row that survives keeps that row where it is, and the others fill the rows left over,
    so a step copies about as many rows as hypotheses branched or ended. Returns the context, the
    sentence each row reads, and *order*: row j holds hypothesis ``order[j]``. Where every row reads
    the source its position already read, the source side is kept as it is (``same_sources``).
    """
    rows, device = len(sources), sources.device
    hypotheses = torch.arange(rows, device=device)
    first = torch.full_like(reading, rows).scatter_reduce_(0, sources, hypotheses, reduce="amin")  # per old row: its first hypothesis
    stayers = first[: min(rows, len(first))]
    stayers = stayers[stayers < rows]
    order = torch.full_like(sources, -1)
    order[sources[stayers]] = stayers
    movers = torch.ones(rows, dtype=torch.bool, device=device)
    movers[stayers] = False
    order[order < 0] = movers.nonzero().flatten()
    index = sources[order]
    if len(index) == len(reading) and torch.equal(index, hypotheses):
        return context, reading, order
    moved = reading[index]
    same = rows <= len(reading) and torch.equal(moved, reading[:rows])
    return context.reorder(index, same_sources=same), moved, order
