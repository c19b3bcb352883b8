"""The public surface: official names importable from official paths, `__all__` everywhere."""

from __future__ import annotations

import importlib
import inspect

import pytest

import aistore

PUBLIC_MODULES = [
    "aistore",
    "aistore.sdk",
    "aistore.sdk.client",
    "aistore.sdk.bucket",
    "aistore.sdk.cluster",
    "aistore.sdk.job",
    "aistore.sdk.xact_const",
    "aistore.sdk.lock_poller",
    "aistore.sdk.obj.obj_file.stream",
    "aistore.sdk.errors",
    "aistore.sdk.const",
    "aistore.sdk.enums",
    "aistore.sdk.provider",
    "aistore.sdk.namespace",
    "aistore.sdk.types",
    "aistore.sdk.list_object_flag",
    "aistore.sdk.retry_config",
    "aistore.sdk.request_client",
    "aistore.sdk.request_executor",
    "aistore.sdk.response_handler",
    "aistore.sdk.retry_manager",
    "aistore.sdk.session_manager",
    "aistore.sdk.utils",
    "aistore.sdk.archive_config",
    "aistore.sdk.blob_download_config",
    "aistore.sdk.wait_result",
    "aistore.sdk.obj.object",
    "aistore.sdk.obj.object_reader",
    "aistore.sdk.obj.object_writer",
    "aistore.sdk.obj.object_client",
    "aistore.sdk.obj.object_attributes",
    "aistore.sdk.obj.object_props",
    "aistore.sdk.obj.object_iterator",
    "aistore.sdk.obj.multipart_upload",
    "aistore.sdk.obj.obj_file.object_file",
    "aistore.sdk.obj.obj_file.errors",
    "aistore.sdk.obj.content_iterator",
    "aistore.sdk.obj.content_iterator.base",
    "aistore.sdk.obj.content_iterator.sequential",
    "aistore.sdk.obj.content_iterator.buffer",
    "aistore.sdk.obj.content_iterator.parallel",
    "aistore.sdk.ais_source",
    "aistore.sdk.batch",
    "aistore.sdk.batch.batch",
    "aistore.sdk.batch.types",
    "aistore.sdk.batch.errors",
    "aistore.sdk.batch.extractor.archive_stream_extractor",
    "aistore.sdk.batch.extractor.tar_stream_extractor",
    "aistore.sdk.batch.extractor.zip_stream_extractor",
    "aistore.sdk.batch.extractor.extractor_registry",
    "aistore.sdk.batch.multipart.multipart_decoder",
    "aistore.sdk.batch.multipart.body_stream_reader",
    "aistore.sdk.batch.multipart.multipart_stream_buffer",
    "aistore.sdk.batch.multipart.sliding_window_buffer",
    "aistore.sdk.batch.multipart.stateful_streaming_parser",
    "aistore.sdk.multiobj",
    "aistore.sdk.multiobj.object_collection",
    "aistore.sdk.multiobj.object_group",
    "aistore.sdk.multiobj.object_names",
    "aistore.sdk.multiobj.object_range",
    "aistore.sdk.multiobj.object_template",
    "aistore.sdk.dataset",
    "aistore.sdk.dataset.config_attribute",
    "aistore.sdk.dataset.data_attribute",
    "aistore.sdk.dataset.label_attribute",
    "aistore.sdk.dataset.dataset_config",
    "aistore.sdk.dataset.data_shard",
    "aistore.sdk.etl",
    "aistore.sdk.etl.etl",
    "aistore.sdk.etl.etl_config",
    "aistore.sdk.etl.etl_const",
    "aistore.sdk.etl.webserver",
    "aistore.sdk.etl.webserver.base_etl_server",
    "aistore.sdk.etl.webserver.fastapi_server",
    "aistore.sdk.etl.webserver.fastapi_streaming",
    "aistore.sdk.etl.webserver.flask_server",
    "aistore.sdk.etl.webserver.http_multi_threaded_server",
    "aistore.sdk.etl.webserver.utils",
    "aistore.sdk.dsort",
    "aistore.sdk.dsort.core",
    "aistore.sdk.dsort.ekm",
    "aistore.sdk.dsort.framework",
    "aistore.sdk.dsort.types",
    "aistore.sdk.authn",
    "aistore.sdk.authn.access_attr",
    "aistore.sdk.authn.authn_client",
    "aistore.sdk.authn.cluster_manager",
    "aistore.sdk.authn.errors",
    "aistore.sdk.authn.response_handler",
    "aistore.sdk.authn.role_manager",
    "aistore.sdk.authn.token_manager",
    "aistore.sdk.authn.types",
    "aistore.sdk.authn.user_manager",
    "aistore.botocore_patch",
    "aistore.botocore_patch.botocore",
    "aistore.mcp",
    "aistore.mcp.server",
    "aistore.mcp.tools",
    "aistore.mcp.tools.buckets",
    "aistore.mcp.tools.cluster",
    "aistore.mcp.tools.jobs",
]

# Names of the official 2.0.0 package that this release covers, by module.
OFFICIAL = {
    "aistore": ["Client", "__version__"],
    "aistore.sdk": [
        "Client", "AuthNClient", "AISSource", "Cluster", "Namespace", "Bucket", "Object", "Job",
        "Etl", "ArchiveConfig", "BlobDownloadConfig", "ListObjectFlag", "ColdGetConf",
        "RetryConfig", "WaitResult", "Batch", "DataShard",
    ],
    "aistore.sdk.multiobj": [
        "ObjectCollection", "ObjectGroup", "ObjectNames", "ObjectRange", "ObjectTemplate",
    ],
    "aistore.sdk.dataset.dataset_config": ["DatasetConfig"],
    "aistore.sdk.dataset.data_attribute": ["DataAttribute"],
    "aistore.sdk.dataset.label_attribute": ["LabelAttribute"],
    "aistore.sdk.dataset.config_attribute": ["ConfigAttribute"],
    "aistore.sdk.dataset.data_shard": ["DataShard"],
    "aistore.sdk.batch.batch": ["Batch"],
    "aistore.sdk.batch.types": ["MossIn", "MossOut", "MossReq", "MossResp"],
    "aistore.sdk.batch.errors": ["MultipartDecodeError"],
    "aistore.sdk.batch.extractor.extractor_registry": ["get_extractor"],
    "aistore.sdk.batch.extractor.tar_stream_extractor": ["TarStreamExtractor"],
    "aistore.sdk.batch.extractor.zip_stream_extractor": ["ZipStreamExtractor"],
    "aistore.sdk.batch.multipart.multipart_decoder": ["MultipartDecoder"],
    "aistore.sdk.errors": [
        "APIRequestError", "AISError", "AISRetryableError", "InvalidBckProvider",
        "ErrRemoteBckNotFound", "ErrBckNotFound", "ErrObjNotFound", "ErrBckAlreadyExists",
        "ErrETLAlreadyExists", "ErrGETConflict", "ErrETLNotFound", "Timeout",
        "InvalidObjectRangeIndex", "JobInfoNotFound", "UnexpectedHTTPStatusCode",
        "InvalidURLException", "NoTargetError", "InvalidPipelineError",
    ],
    "aistore.sdk.obj.obj_file.errors": [
        "ObjectFileReaderMaxResumeError", "ObjectFileReaderUnexpectedEOF",
        "ObjectFileReaderStreamError",
    ],
    "aistore.sdk.types": [
        "ActionMsg", "NetInfo", "Snode", "Smap", "BucketEntry", "BucketList", "BucketModel",
        "JobArgs", "JobQuery", "JobStatus", "JobStats", "JobSnap", "AggregatedJobSnap",
        "ListObjectsMsg", "MptCompletedPart", "Namespace", "BsummCtrlMsg", "CopyBckMsg",
        "TransformBckMsg", "TCBckMsg", "PrefetchMsg", "TCMultiObj", "ArchiveMultiObj",
        "PromoteAPIArgs", "BlobMsg",
    ],
    "aistore.sdk.obj.content_iterator": [
        "BaseContentIterProvider", "ContentIterProvider", "StreamBounds", "ParallelBuffer",
        "ParallelContentIterProvider",
    ],
    "aistore.sdk.obj.content_iterator.buffer": ["ParallelBuffer", "RingBuffer"],
    "aistore.sdk.obj.content_iterator.parallel": ["ParallelContentIterProvider"],
    "aistore.sdk.ais_source": ["AISSource"],
    "aistore.sdk.obj.object_attributes": ["ObjectAttributes", "ECInfo", "ChunksInfo"],
    "aistore.sdk.obj.object": ["Object", "BucketDetails"],
    "aistore.sdk.provider": ["Provider"],
    "aistore.sdk.enums": ["FLTPresence", "Colocation", "LogSeverity", "NodeFilter"],
    "aistore.sdk.retry_config": ["RetryConfig", "ColdGetConf", "NETWORK_RETRY_EXCEPTIONS"],
    "aistore.sdk.session_manager": ["SessionManager"],
    "aistore.sdk.request_executor": ["RequestExecutor"],
    "aistore.sdk.retry_manager": ["RetryManager"],
    "aistore.sdk.request_client": ["RequestClient"],
    "aistore.sdk.response_handler": ["ResponseHandler", "AISResponseHandler"],
    "aistore.sdk.const": [
        "HEADER_RANGE", "AIS_PRESENT", "AIS_CHUNKS_COUNT", "HEADER_INV_NAME",
        "DEFAULT_CHUNK_SIZE", "DEFAULT_PARALLEL_CHUNK_SIZE", "PROPS_CHUNKED", "XX_HASH_SEED",
        "DEFAULT_JOB_WAIT_TIMEOUT", "DEFAULT_JOB_POLL_TIME", "GO_ZERO_TIME",
        "MSGPACK_CONTENT_TYPE", "STATUS_PARTIAL_CONTENT", "STATUS_REDIRECT_TMP",
        "URL_PATH_GB", "QPARAM_COLOC", "GB_MISSING_FILES_DIR", "EXT_TARLZ4",
        "ACT_DELETE_OBJECTS", "ACT_EVICT_OBJECTS", "ACT_PREFETCH_OBJECTS", "ACT_COPY_OBJECTS",
        "ACT_ARCHIVE_OBJECTS", "ACT_SUMMARY_BCK", "ACT_MOVE_BCK", "ACT_COPY_BCK",
        "WHAT_NODE_STATS_AND_STATUS", "WHAT_LOG", "QPARAM_LOG_SEV", "QPARAM_ALL_LOGS",
        "URL_PATH_REVERSE", "HEADER_BUCKET_SUMM", "HEADER_XACTION_ID", "JOGGER_COUNT_MASK",
        "DEFAULT_DATASET_MAX_COUNT",
    ],
}  # fmt: skip


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_every_public_module_declares_all(name: str) -> None:
    module = importlib.import_module(name)
    assert hasattr(module, "__all__"), name
    for symbol in module.__all__:
        assert hasattr(module, symbol), f"{name}.{symbol} is listed but missing"


@pytest.mark.parametrize(("name", "symbols"), sorted(OFFICIAL.items()))
def test_official_names_exported(name: str, symbols: list[str]) -> None:
    module = importlib.import_module(name)
    missing = [s for s in symbols if s not in module.__all__]
    assert not missing, f"{name} lacks {missing}"


def test_public_classes_have_docstring_examples() -> None:
    for name in PUBLIC_MODULES:
        module = importlib.import_module(name)
        for symbol in module.__all__:
            obj = getattr(module, symbol)
            if (
                inspect.isclass(obj)
                and obj.__module__ == name
                and not issubclass(obj, BaseException)
            ):
                assert "Example" in (obj.__doc__ or ""), f"{name}.{symbol} lacks an example"


def test_root_package() -> None:
    assert aistore.Client is importlib.import_module("aistore.sdk.client").Client


# The official SDK's request seams: constructor parameters and public members, in its order.
SEAMS = {
    "aistore.sdk.session_manager.SessionManager": (
        ["retry", "ca_cert", "skip_verify", "client_cert", "max_pool_size"],
        ["retry", "ca_cert", "client_cert", "skip_verify", "session"],
    ),
    "aistore.sdk.request_executor.RequestExecutor": (
        ["base_url", "session_manager", "token", "timeout"],
        ["base_url", "session_manager", "token", "timeout", "request", "request_absolute"],
    ),
    "aistore.sdk.retry_manager.RetryManager": (
        ["executor", "retry_config"],
        ["retry_config", "with_retry"],
    ),
}


@pytest.mark.parametrize("path", SEAMS)
def test_request_seams_keep_the_official_shape(path: str) -> None:
    module, _, name = path.rpartition(".")
    cls = getattr(importlib.import_module(module), name)
    params, members = SEAMS[path]
    assert list(inspect.signature(cls).parameters) == params
    assert all(hasattr(cls, member) for member in members)
