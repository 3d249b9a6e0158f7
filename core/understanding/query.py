"""The ask query: what one chat question asks for, as read, decided once and passed whole.

The parser's reading (core/understanding) becomes one `AskQuery`; the estimate request, the reply
renderer and the follow-up buttons all read this same object, and a button that switches the OS or
the KV cache type makes a new one with `dataclasses.replace`. `as_json()` is the `query` object of
`python -m bot ask --json`, a stable interface: fields are added there, never renamed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypeGuard, get_args

from core.catalog.kv_cache import FULL_PRECISION_KV, KvCacheType
from core.i18n import Lang

# The last five run the other way: which models fit a card, what hardware a model needs, two cards
# or two models side by side, time to first token, concurrent users.
Intent = Literal[
    "speed",
    "fit",
    "cards_needed",
    "memory",
    "general",
    "which_model",
    "which_hardware",
    "compare",
    "ttft",
    "concurrency",
]
INTENTS: tuple[Intent, ...] = get_args(Intent)

DEFAULT_PROMPT = 512  # tokens of prompt the prefill figures assume when the question names none


def is_intent(value: object) -> TypeGuard[Intent]:
    return value in INTENTS


@dataclass(frozen=True, slots=True)
class QueryNote:
    """Something in the question that was read but not used as typed: a value out of range ("1000x",
    "0G", "ctx 999999999999") or a setup the estimate prices another way (mixed cards, several
    machines). `code` names the message (catalogs/messages/reply.toml, `reply.note.<code>`); `value`
    is what the question said, or what was priced instead."""

    code: str
    value: str = ""
    priced: str = ""  # what the estimate priced instead ("2× GeForce RTX 4090"), where that differs

    def as_json(self) -> dict[str, str]:
        return {"code": self.code, "value": self.value, "priced": self.priced}


@dataclass(frozen=True, slots=True)
class CardSpec:
    """Some cards of one kind: the catalog id (None when the question named none clearly), how many,
    and the memory per card (None: the catalog's size for that card)."""

    gpu_id: str | None
    count: int = 1
    memory_gib: float | None = None
    assumed: bool = False  # named only by its memory ("a 16GB GPU"): a typical card of that size


@dataclass(frozen=True, slots=True)
class Hardware:
    """The machine asked about. A tuple of card specs so that mixed setups ("5090 + 4090") fit; the
    estimator prices one kind of card today, the first."""

    cards: tuple[CardSpec, ...] = (CardSpec(None),)
    host_ram_gib: float | None = None  # system RAM, when the question says (None: the host preset)
    host_ram_type: str | None = None  # "DDR4", "DDR5", "LPDDR5X" when the question says
    machines: int = 1  # "3台8*L20": 3 machines, each with the cards above
    laptop: bool = False  # the question says the cards are in a laptop ("笔记本", "laptop")
    host_ram_channels: int | None = None  # memory channels, when said ("双通道", "8-channel")
    # The host CPU (catalogs/cpus.toml id) and its sockets when said ("7950X", "双路 Xeon Gold 6138"):
    # with no card, the question is a CPU-only run on it; with one, the box's RAM is the CPU's.
    cpu: str | None = None
    cpu_sockets: int | None = None

    @property
    def first(self) -> CardSpec:
        return self.cards[0] if self.cards else CardSpec(None)


@dataclass(frozen=True, slots=True)
class AskQuery:
    hardware: Hardware
    model_id: str | None = None
    quants: tuple[str, ...] = ()  # quant ids asked for, in the order given (none: the default ladder)
    contexts: tuple[int, ...] = ()  # context lengths in tokens (none: the default ladder)
    depth: int | None = None  # tokens already in the context when decoding (None: each row's own)
    prompt: int = DEFAULT_PROMPT
    os: str | None = None  # None: the card decides (see core.estimator.memory.default_os)
    framework: str | None = None  # framework id the question named
    kv_type: KvCacheType = FULL_PRECISION_KV
    lang: Lang = "en"  # the reply's language, decided once before the query is made
    target: str = "plain"  # the chat markup the reply is rendered for: plain | telegram | discord
    intent: Intent = "general"
    notes: tuple[QueryNote, ...] = ()  # values read but not used as typed, said in the reply
    # What only some intents carry (None: not asked). `prompt` above is the prompt length either way.
    other_card: CardSpec | None = None  # compare: the second card
    other_model_id: str | None = None  # compare: the second model
    users: int | None = None  # concurrency: concurrent users asked about
    # concurrency: "how many users can it serve?" with no number (users None): the answer finds the
    # KV-bound maximum rather than pricing a count the question never gave.
    capacity: bool = False
    model_size_b: float | None = None  # the model was named only by a size ("72B", "140亿")
    # The llama.cpp backend the question named ("on vulkan", "用rocm", "纯CPU" -> cpu), checked against
    # the card (None: not named, or named but unable to drive the card: a note says so).
    backend: str | None = None
    # compare: the second backend of "ROCm vs Vulkan on 7900 XTX" (checked against the card like `backend`).
    other_backend: str | None = None
    # The Ollama tag the question typed ("ollama run qwen3:32b"): the command runs that tag.
    ollama_tag: str | None = None
    # Serving flags pasted with the question (issue 21): `--n-cpu-moe N` (-1: `--cpu-moe`, all) prices
    # that experts offload; `--gpu-memory-utilization` is read and said (the table keeps vLLM's own).
    cpu_moe_layers: int | None = None
    gpu_memory_utilization: float | None = None
    split_mode: str | None = None  # `-sm tensor` / `-sm graph` / `-sm row` pasted (multi_gpu.SPLITS)
    link: str | None = None  # "nvlink" said: what joins the cards where it isn't their own
    ubatch: int | None = None  # `-ub 4096` pasted: the physical batch its prefill and buffer are priced at
    # "2000 in 500 out", "输出 500" (issue 23): tokens of reply asked about; the full answer adds the
    # end-to-end output rate (prefill included) beside pure decode (core/estimator/end_to_end.py).
    output: int | None = None
    # "at least 20 tok/s", "达到 30 token/s": the decode speed wanted; the reply says what reaches it.
    target_tps: float | None = None
    # "ollama or exllamav2", "llama.cpp vs vllm": every priced framework the question sets against each
    # other (two or more; `framework` is the first), answered as a comparison on this setup. Empty when
    # it compares none: the parse keeps the first framework said, this list the rest of them.
    frameworks: tuple[str, ...] = ()
    # which_model: the task the models are wanted for ("best model for coding": "code",
    # catalogs/intents.toml [task]); None when the question names none, or names a model (a
    # single-model question answers the same with or without "for coding").
    task: str | None = None
    # "Is q4 KV cache worth it", "q8 kv cache 值得吗": the full answer adds the line with the cache's
    # size per type and the trade-off (core/render/kv_worth.py).
    kv_worth: bool = False
    # "How long a context can I fit", "能开多长上下文": the full answer adds the longest context per KV
    # cache type at the plan's quant (core/render/max_context.py).
    max_context: bool = False
    # Side questions the full answer adds one sourced line for (catalogs/intents.toml [topics]).
    topics: tuple[str, ...] = ()

    @property
    def gpu_id(self) -> str | None:
        return self.hardware.first.gpu_id

    @property
    def complete(self) -> bool:
        """A card and a model: a full answer, with follow-up buttons."""
        return self.gpu_id is not None and self.model_id is not None

    def as_json(self) -> dict[str, Any]:
        """The `query` of `ask --json`; the first card is `gpu`, every card is in `cards`. Keys are
        only ever added (after the first eight), so scripts written against older output keep working."""
        card = self.hardware.first
        hw = self.hardware
        return {
            "gpu": {"id": card.gpu_id, "count": card.count, "memory_gib": card.memory_gib},
            "model": {"id": self.model_id},
            "quants": list(self.quants),
            "contexts": list(self.contexts),
            "os": self.os,
            "framework": self.framework,
            "lang": self.lang,
            "intent": self.intent,
            "cards": [{"id": c.gpu_id, "count": c.count, "memory_gib": c.memory_gib} for c in hw.cards],
            "machines": hw.machines,
            "laptop": hw.laptop,
            "host_ram_gib": hw.host_ram_gib,
            "host_ram_type": hw.host_ram_type,
            "host_ram_channels": hw.host_ram_channels,
            "kv_type": self.kv_type,
            "notes": [n.as_json() for n in self.notes],
            **self._intent_json(),
            "cpu": hw.cpu,
            "cpu_sockets": hw.cpu_sockets,
            "ollama_tag": self.ollama_tag,
            "cpu_moe_layers": self.cpu_moe_layers,
            "gpu_memory_utilization": self.gpu_memory_utilization,
            "split_mode": self.split_mode,
            "link": self.link,
            "ubatch": self.ubatch,
            "output": self.output,
            "frameworks": list(self.frameworks),
            # Only when a task was read: every other question's JSON stays as it was.
            **({"task": self.task} if self.task is not None else {}),
            **({"target_tps": self.target_tps} if self.target_tps is not None else {}),
        }

    def _intent_json(self) -> dict[str, Any]:
        """Keys the intents added (what an intent reply was decided with)."""
        other = self.other_card
        return {
            "gpu_assumed": self.hardware.first.assumed,
            "compare": {
                "gpu": None if other is None else {"id": other.gpu_id, "count": other.count},
                "model": None if self.other_model_id is None else {"id": self.other_model_id},
                "backend": self.other_backend,
            },
            "prompt": self.prompt,
            "users": self.users,
            "capacity": self.capacity,
            "model_size_b": self.model_size_b,
            "backend": self.backend,
        }
