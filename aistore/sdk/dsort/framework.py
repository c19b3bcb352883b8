"""The specification of a dSort job: input and output shards, order, output size.

Example:
    >>> from aistore.sdk.multiobj import ObjectRange
    >>> from aistore.sdk.types import BucketModel
    >>> group = DsortShardsGroup(BucketModel(name="in", provider="ais"), "input",
    ...                          ObjectRange("shard-", 0, 9), ".tar")
    >>> group.as_dict()["input_extension"]
    '.tar'
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, model_validator

from aistore.sdk.dsort.ekm import ExternalKeyMap
from aistore.sdk.multiobj import ObjectNames, ObjectRange
from aistore.sdk.types import BucketModel

__all__ = ["DsortAlgorithm", "DsortFramework", "DsortShardsGroup"]

_SPEC_SUFFIXES = (".json", ".yaml", ".yml")


def load_spec_file(path: str | Path) -> Any:
    """The content of a JSON or YAML spec file (YAML needs `pyyaml`).

    Raises:
        ValueError: another suffix.
        ImportError: a YAML file without `pyyaml` installed.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in _SPEC_SUFFIXES:
        raise ValueError("Specification must be a JSON or YAML file")
    text = path.read_text(encoding="utf-8")
    if suffix == ".json":
        return json.loads(text)
    try:
        import yaml  # type: ignore[import-untyped,unused-ignore]
    except ImportError as err:
        raise ImportError("reading a YAML dSort spec needs `pip install pyyaml`") from err
    return yaml.safe_load(text)


class DsortShardsGroup:
    """The input or output shards of a dSort job: bucket, name format, extension.

    Example:
        >>> from aistore.sdk.multiobj import ObjectRange
        >>> g = DsortShardsGroup(BucketModel(name="out", provider="ais"), "output",
        ...                      ObjectRange("out-", 0, 3), ".tar")
        >>> g.as_dict()["output_format"]
        'out-{0..3..1}'

    Args:
        bck: the bucket.
        role: "input" or "output".
        format: input: `ObjectNames` or `ObjectRange`; output: `ObjectRange` or
            `ExternalKeyMap`.
        extension: the shards' extension (".tar", ".tgz", ...).

    Raises:
        ValueError: a bad role, or a format the role does not take.
    """

    def __init__(
        self,
        bck: BucketModel,
        role: Literal["input", "output"],
        format: ObjectNames | ObjectRange | ExternalKeyMap,  # noqa: A002 - official name
        extension: str,
    ) -> None:
        if role not in ("input", "output"):
            raise ValueError('role must be either "input" or "output"')
        if role == "input" and not isinstance(format, (ObjectNames, ObjectRange)):
            raise ValueError(
                'format of input role must be an instance of "ObjectNames" or "ObjectRange"'
            )
        if role == "output" and not isinstance(format, (ObjectRange, ExternalKeyMap)):
            raise ValueError(
                'format of output role must be an instance of "ObjectRange" or "ExternalKeyMap"'
            )
        self.bck = bck
        self.role = role
        self.format = format
        self.extension = extension

    def as_dict(self) -> dict[str, Any]:
        """The group's fields of a dSort spec."""
        fmt: Any = self.format.get_value() if self.role == "input" else str(self.format)  # type: ignore[union-attr]
        return {
            f"{self.role}_bck": self.bck.as_dict(),
            f"{self.role}_format": fmt,
            f"{self.role}_extension": self.extension,
        }


class DsortAlgorithm(BaseModel):
    """How records are ordered: by name, shuffled (with a seed), or by a content key.

    Example:
        >>> algo = DsortAlgorithm(kind="content", extension=".cls", content_key_type="int")
        >>> algo.as_dict()["content_key_type"]
        'int'

    Raises:
        ValueError: `extension` and `content_key_type` missing for "content", or given for
            another kind.
    """

    kind: Literal["alphanumeric", "shuffle", "content"] = "alphanumeric"
    decreasing: bool = False
    seed: str | None = ""
    extension: str | None = None
    content_key_type: Literal["int", "float", "string"] | None = None

    @model_validator(mode="after")
    def validate_content_fields(self) -> DsortAlgorithm:
        """The content fields are required for "content" and refused otherwise."""
        if self.kind == "content":
            if not self.extension:
                raise ValueError('For kind="content", the "extension" field is required.')
            if not self.content_key_type:
                raise ValueError('For kind="content", the "content_key_type" field is required.')
        elif self.extension or self.content_key_type:
            raise ValueError(
                'The "extension" and "content_key_type" fields are only allowed for kind="content".'
            )
        return self

    def as_dict(self) -> dict[str, Any]:
        """Wire form."""
        out: dict[str, Any] = {"kind": self.kind, "decreasing": self.decreasing, "seed": self.seed}
        if self.kind == "content":
            out["extension"] = self.extension
            out["content_key_type"] = self.content_key_type
        return out


class DsortFramework:
    """A whole dSort specification.

    Example:
        >>> from aistore.sdk.multiobj import ObjectRange
        >>> src = BucketModel(name="in", provider="ais")
        >>> dst = BucketModel(name="out", provider="ais")
        >>> fw = DsortFramework(
        ...     DsortShardsGroup(src, "input", ObjectRange("in-", 0, 9), ".tar"),
        ...     DsortShardsGroup(dst, "output", ObjectRange("o-", 0, 3), ".tar"),
        ...     output_shard_size="10MiB")
        >>> fw.to_spec()["output_shard_size"]
        '10MiB'

    Args:
        input_shards: the shards to read.
        output_shards: the shards to write.
        algorithm: the order (alphanumeric by default).
        description: free text.
        output_shard_size: the size of each output shard ("10MiB", ...).
    """

    def __init__(
        self,
        input_shards: DsortShardsGroup,
        output_shards: DsortShardsGroup,
        algorithm: DsortAlgorithm | None = None,
        description: str | None = None,
        output_shard_size: str | None = None,
    ) -> None:
        self.input_shards = input_shards
        self.output_shards = output_shards
        self.algorithm = algorithm if algorithm is not None else DsortAlgorithm()
        self.description = description
        self.output_shard_size = output_shard_size
        self.ekm_file: str | None = None
        self.ekm_sep: str | None = None

    @classmethod
    def from_file(cls, spec: str | Path) -> DsortFramework:
        """The framework of a JSON or YAML spec file (only the fields this class holds).

        Raises:
            ValueError: an unsupported suffix or a malformed input/output format.
        """
        data = load_spec_file(spec)
        input_format: Any = data.get("input_format")
        if not isinstance(input_format, dict):
            raise ValueError("input_format must be a dictionary")
        if "template" in input_format:
            input_format = ObjectRange.from_string(input_format["template"])
        elif "objnames" in input_format:
            input_format = ObjectNames(input_format["objnames"])
        else:
            raise ValueError(
                '"input_format" dictionary must contain either the key "template" or "objnames"'
            )
        output_format: Any = data.get("output_format")
        if isinstance(output_format, list):
            output_format = ObjectNames(output_format)
        elif isinstance(output_format, str):
            output_format = ObjectRange.from_string(output_format)
        else:
            raise ValueError('"output_format" must be either a list or a range string')
        framework = cls(
            input_shards=DsortShardsGroup(
                BucketModel(**data.get("input_bck", {})),
                "input",
                input_format,
                data.get("input_extension", ""),
            ),
            output_shards=DsortShardsGroup(
                BucketModel(**data.get("output_bck", {})),
                "output",
                output_format,
                data.get("output_extension", ""),
            ),
            algorithm=DsortAlgorithm(**data.get("algorithm", {})),
            output_shard_size=data.get("output_shard_size", ""),
        )
        framework.ekm_file = data.get("ekm_file", "")
        framework.ekm_sep = data.get("ekm_file_sep", "")
        return framework

    def to_spec(self) -> dict[str, Any]:
        """The spec document to start the job with."""
        spec = {**self.input_shards.as_dict(), **self.output_shards.as_dict()}
        spec["algorithm"] = self.algorithm.as_dict()
        spec["description"] = self.description or ""
        if self.output_shard_size:
            spec["output_shard_size"] = self.output_shard_size
        if self.ekm_file:
            spec["ekm_file"] = self.ekm_file
            spec["ekm_file_sep"] = self.ekm_sep
        return spec
