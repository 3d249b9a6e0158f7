"""`python -m bot models sync DIR...` / `models add REPO|URL`: catalog entries from config.json files.

Each DIR holds a `config.json` and, optionally, a `SOURCE.txt` saying where the file was copied
from (`Model: org/name`, `Source: GitHub owner/repo, path P`, `Commit: SHA`, `URL: ...`) -- the
layout of ../shared/reference/hf_configs. Without SOURCE.txt the repo id is the folder name with
`__` for `/`. An entry whose `hf_repo` (or an alias) is that repo is updated in place: architecture
fields from the config, names, aliases, release and popularity as they were. A new repo gets a new
entry whose metadata (family, aliases, release) still has to be written by hand; the command says
so, and the catalog tests fail until it is.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from core.catalog.from_config import ConfigError, ConfigReading, merge_into, read_config
from core.catalog.loader import CATALOG_DIR, CatalogError, load_catalog
from core.catalog.model import Model
from core.catalog.model_source import Provenance
from core.catalog.model_toml import upsert


@dataclass(frozen=True, slots=True)
class ConfigDir:
    path: Path
    repo: str  # "org/name"
    source: str  # citation written into the entry's `source`


def _field(text: str, name: str) -> str:
    match = re.search(rf"^{name}:\s*(.+)$", text, re.MULTILINE)
    return match.group(1).strip() if match else ""


def read_config_dir(path: Path) -> ConfigDir:
    """The folder's repo id and a citation for its config.json."""
    note = path / "SOURCE.txt"
    text = note.read_text(encoding="utf-8") if note.exists() else ""
    repo = _field(text, "Model").split()[0] if _field(text, "Model") else path.name.replace("__", "/")
    citation = f"config.json of https://huggingface.co/{repo}"
    origin = _field(text, "Source")
    commit = _field(text, "Commit").split()[0] if _field(text, "Commit") else ""
    copied = re.match(r"GitHub (\S+), path (\S+)", origin)
    if copied:
        where = f"github:{copied.group(1)}" + (f"@{commit[:10]}" if commit else "")
        citation += f" (copy read at {where} {copied.group(2)})"
    elif _field(text, "URL"):
        citation += f" (copy read at {_field(text, 'URL')})"
    return ConfigDir(path=path, repo=repo, source=citation)


def _normalise(text: str) -> str:
    return re.sub(r"[\s\-_:/]+", "", text.strip().lower())


def find_entry(models: dict[str, Model], repo: str) -> Model | None:
    """The catalog entry for `repo`: by hf_repo, else by an alias that spells the repo id."""
    for model in models.values():
        if model.hf_repo.lower() == repo.lower():
            return model
    key = _normalise(repo)
    for model in models.values():
        if any(_normalise(alias) == key for alias in model.aliases):
            return model
    return None


def proposed_id(repo: str) -> str:
    """A catalog id for a new repo: its name, lowercase, without the -Instruct / -it suffix."""
    name = repo.split("/")[-1].lower()
    return re.sub(r"-(instruct|it|bf16)$", "", name)


def entry_for(found: ConfigDir, reading: ConfigReading, models: dict[str, Model]) -> tuple[Model, bool]:
    """(the entry to write, whether it is new)."""
    existing = find_entry(models, found.repo)
    derived = reading.model
    if existing is not None:
        return merge_into(existing, derived), False
    name = found.repo.split("/")[-1]
    new = merge_into(
        Model(
            id=proposed_id(found.repo),
            family="",
            name=name,
            aliases=(found.repo,),
            params_b=derived.params_b,
            active_params_b=derived.active_params_b,
            layers=derived.layers,
            hidden=derived.hidden,
            heads=derived.heads,
            kv_heads=derived.kv_heads,
            head_dim=derived.head_dim,
            vocab=derived.vocab,
            max_context=derived.max_context,
            hf_repo=found.repo,
        ),
        derived,
    )
    return new, True


def _describe(reading: ConfigReading) -> str:
    p = reading.params
    vision = "not counted" if p.vision is None else f"{p.vision / 1e9:.3f}B"
    return (
        f"decoder {p.decoder / 1e9:.3f}B (active {p.active / 1e9:.3f}B), mtp {p.mtp / 1e9:.3f}B, "
        f"vision {vision}, checkpoint total {p.total / 1e9:.3f}B"
    )


def sync(dirs: list[Path], catalog_file: Path, dry_run: bool) -> int:
    try:
        models = dict(load_catalog(catalog_file.parent).models)
    except CatalogError as exc:
        print(f"tokbot: {exc}", file=sys.stderr)
        return 2
    text = catalog_file.read_text(encoding="utf-8")
    failures = 0
    for path in dirs:
        found = read_config_dir(path)
        try:
            config = json.loads((path / "config.json").read_text(encoding="utf-8"))
            reading = read_config(config, repo=found.repo, source=found.source)
        except (OSError, json.JSONDecodeError, ConfigError) as exc:
            print(f"{found.repo}: not synced: {exc}")
            failures += 1
            continue
        entry, is_new = entry_for(found, reading, models)
        models[entry.id] = entry
        text = upsert(text, entry)
        verb = "new entry" if is_new else "updated"
        todo = " -- write family, aliases, release and popularity by hand" if is_new else ""
        print(f"{found.repo}: {verb} {entry.id}: {_describe(reading)}{todo}")
    if not dry_run:
        catalog_file.write_text(text, encoding="utf-8")
    return 1 if failures else 0


def add(reference: str, catalog_file: Path, dry_run: bool) -> int:
    """`models add REPO|URL`: read the repo's config.json from the Hub (HF_ENDPOINT, HF_TOKEN) into
    a catalog entry, as `sync` does with a local folder."""
    import asyncio

    from bot.hub.hf_source import HuggingFaceSource
    from core.catalog.model_source import ModelSourceError, parse_repo_ref

    ref = parse_repo_ref(reference)
    if ref is None:
        print(f"tokbot: {reference!r} is not a Hugging Face repo id or URL (org/name)", file=sys.stderr)
        return 2
    try:
        found = asyncio.run(HuggingFaceSource().lookup(ref.repo))
    except ModelSourceError as exc:
        print(f"{ref.repo}: not added: {exc.kind}: {exc.detail}")
        return 1
    models = dict(load_catalog(catalog_file.parent).models)
    where = ConfigDir(Path(), found.provenance.repo, _hub_citation(found.provenance))
    reading = ConfigReading(replace(found.model, source=where.source), found.params, found.model.family)
    entry, is_new = entry_for(where, reading, models)
    if is_new:
        entry = replace(entry, release=found.model.release)
    text = upsert(catalog_file.read_text(encoding="utf-8"), entry)
    verb = "new entry" if is_new else "updated"
    at = found.provenance.revision[:10]
    print(f"{found.provenance.repo}: {verb} {entry.id} at {at}: {_describe(reading)}")
    if not dry_run:
        catalog_file.write_text(text, encoding="utf-8")
    return 0


def _hub_citation(provenance: Provenance) -> str:
    where = f"https://huggingface.co/{provenance.repo}"
    return f"config.json of {where} at {provenance.revision} (read {provenance.read_at})"


def run_models(args: argparse.Namespace) -> int:
    catalog = Path(args.catalog) if args.catalog else CATALOG_DIR / "models.toml"
    if args.models_command == "add":
        return add(args.reference, catalog, args.dry_run)
    if args.models_command == "sync":
        return sync([Path(d) for d in args.dirs], catalog, args.dry_run)
    return 2
