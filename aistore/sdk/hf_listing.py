"""What a HuggingFace download job fetches: a repository's files (or its Parquet conversion) as
links to the Hub's `resolve` endpoint, read with ``huggingface_hub`` so that ``HF_ENDPOINT``,
``HF_TOKEN`` and a saved login count as they do for every other Hub client.

Needs the ``hf`` extra; imported by `Download.start_hf` on use.
"""

from __future__ import annotations

from typing import Any

from huggingface_hub import HfApi, get_session, get_token, hf_hub_url, hf_raise_for_status

__all__ = ["hf_job", "parquet_names"]

_REPO_TYPES = ("model", "dataset")
_SKIPPED = (".gitattributes",)  # as the CLI: git's attributes are not data


def hf_job(
    repo_id: str,
    *,
    repo_type: str,
    filename: str | None,
    revision: str,
    prefix: str,
    parquet: bool,
    token: str | bool | None,
    endpoint: str | None,
) -> tuple[str, dict[str, Any], dict[str, str]]:
    """The download job for a repository, or one file of it: its type (`single` or `multi`),
    its type's fields and the HTTP headers every GET of it needs (the token's)."""
    if repo_type not in _REPO_TYPES:
        raise ValueError(f"repo_type must be one of {_REPO_TYPES}, got {repo_type!r}")
    api = HfApi(endpoint=endpoint, token=token)
    secret = get_token() if token is None or token is True else (token or None)
    headers = {"Authorization": f"Bearer {secret}"} if secret else {}
    if filename:
        link = hf_hub_url(
            repo_id, filename, repo_type=repo_type, revision=revision, endpoint=api.endpoint
        )
        return "single", {"link": link, "object_name": prefix + filename}, headers
    if repo_type == "dataset" and parquet:
        objects = {
            prefix + name: url for name, url in _parquet_links(api, repo_id, headers).items()
        }
        return "multi", {"objects": objects}, headers
    info = api.repo_info(repo_id, repo_type=repo_type, revision=revision)
    commit = info.sha or revision  # every file from the one commit the listing describes
    siblings = getattr(info, "siblings", None) or []
    objects = {
        prefix + s.rfilename: hf_hub_url(
            repo_id, s.rfilename, repo_type=repo_type, revision=commit, endpoint=api.endpoint
        )
        for s in siblings
        if not s.rfilename.endswith("/") and s.rfilename not in _SKIPPED
    }
    if not objects:
        raise ValueError(f"{repo_type} {repo_id!r} at {revision!r} has no files")
    return "multi", {"objects": objects}, headers


def _parquet_links(api: HfApi, repo_id: str, headers: dict[str, str]) -> dict[str, str]:
    """The Hub's Parquet conversion of a dataset (`GET /api/datasets/<id>/parquet`, the listing
    the CLI reads), named as `parquet_names` says."""
    resp = get_session().get(
        f"{api.endpoint}/api/datasets/{repo_id}/parquet",
        headers=headers,
        timeout=30,
    )
    hf_raise_for_status(resp)
    names = parquet_names(resp.json())
    if not names:
        raise ValueError(f"no parquet files found for dataset {repo_id!r}")
    return names


def parquet_names(listing: dict[str, Any]) -> dict[str, str]:
    """Object name -> URL for a Parquet listing ``{config: {split: [url, ...]}}``: as the CLI
    names them, ``<split>/<i>.parquet`` for a split of one file, else
    ``<config>/<split>/<i>.parquet``; where that would give two files one name (two configs
    with a one-file split of the same name), every file is named the long way."""
    short: dict[str, str] = {}
    full: dict[str, str] = {}
    clash = False
    for config, splits in listing.items():
        if not isinstance(splits, dict):
            continue
        for split, urls in splits.items():
            if not isinstance(urls, list):
                continue
            for i, url in enumerate(u for u in urls if isinstance(u, str)):
                name = f"{split}/{i}.parquet" if len(urls) == 1 else f"{config}/{split}/{i}.parquet"
                clash = clash or name in short
                short[name] = url
                full[f"{config}/{split}/{i}.parquet"] = url
    return full if clash else short
