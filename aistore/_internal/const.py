"""Names and numbers that cross the wire: headers, query parameters, paths, actions, defaults.

Values are fixed by the AIS REST API v1 and by the official SDK; spellings must not change.
A leaf module: it imports nothing from the package.

Example:
    >>> from aistore._internal.const import HEADER_RANGE, DEFAULT_CHUNK_SIZE
    >>> headers = {HEADER_RANGE: "bytes=0-99"}
"""

# Units
KIB = 2**10
MIB = 2**20
GB = 10**9
GBIT = GB // 8

# Archive extensions
EXT_TAR = ".tar"
EXT_TGZ = ".tgz"
EXT_TARGZ = ".tar.gz"
EXT_TARLZ4 = ".tar.lz4"
EXT_ZIP = ".zip"

# Standard headers
HEADER_ACCEPT = "Accept"
HEADER_USER_AGENT = "User-Agent"
HEADER_CONTENT_TYPE = "Content-Type"
HEADER_CONTENT_LENGTH = "Content-Length"
HEADER_CONTENT_ENCODING = "Content-Encoding"
HEADER_CONTENT_RANGE = "Content-Range"
HEADER_TRANSFER_ENCODING = "Transfer-Encoding"
HEADER_LOCATION = "Location"
HEADER_CONNECTION = "Connection"
HEADER_RANGE = "Range"
HEADER_AUTHORIZATION = "Authorization"
HEADER_LAST_MODIFIED = "Last-Modified"
HEADER_ETAG = "ETag"

# Standard header values
USER_AGENT_BASE = "ais/python"
JSON_CONTENT_TYPE = "application/json"
MSGPACK_CONTENT_TYPE = "application/msgpack"

# Object attribute headers; the official SDK spells them in lower case (HTTP names are
# case-insensitive, the server sends the Go canonical form).
AIS_CHECKSUM_TYPE = "ais-checksum-type"
AIS_CHECKSUM_VALUE = "ais-checksum-value"
AIS_ACCESS_TIME = "ais-atime"
AIS_VERSION = "ais-version"
AIS_CUSTOM_MD = "ais-custom-md"
AIS_BCK_NAME = "ais-bucket-name"
AIS_BCK_PROVIDER = "ais-bucket-provider"
AIS_OBJ_NAME = "ais-name"
AIS_LOCATION = "ais-location"
AIS_MIRROR_PATHS = "ais-mirror-paths"
AIS_MIRROR_COPIES = "ais-mirror-copies"
AIS_EC_GENERATION = "ais-ec-generation"
AIS_EC_DATA = "ais-ec-data"
AIS_EC_PARITY = "ais-ec-parity"
AIS_EC_REPLICATED = "ais-ec-replicated"
AIS_PRESENT = "ais-present"
AIS_CHUNKS_COUNT = "ais-chunks-count"
AIS_CHUNKS_MAX_CHUNK_SIZE = "ais-chunks-max-chunk-size"

# Property names for a selective (v2) HEAD
PROPS_SIZE = "size"
PROPS_CHUNKED = "chunked"

# Ais- headers in the Go canonical form
HEADER_PREFIX = "Ais-"
HEADER_BUCKET_PROPS = HEADER_PREFIX + "Bucket-Props"
HEADER_BUCKET_SUMM = HEADER_PREFIX + "Bucket-Summ"
HEADER_XACTION_ID = HEADER_PREFIX + "Xaction-Id"
HEADER_NODE_ID = HEADER_PREFIX + "Node-Id"
HEADER_NODE_URL = HEADER_PREFIX + "Node-Url"
HEADER_INV_NAME = HEADER_PREFIX + "Inv-Name"
HEADER_OBJECT_BLOB_DOWNLOAD = HEADER_PREFIX + "Blob-Download"
HEADER_OBJECT_BLOB_CHUNK_SIZE = HEADER_PREFIX + "Blob-Chunk"
HEADER_OBJECT_BLOB_WORKERS = HEADER_PREFIX + "Blob-Workers"
HEADER_OBJECT_APPEND_HANDLE = HEADER_PREFIX + "Append-Handle"
# A failed HEAD has no body: the server puts its error document here.
HEADER_ERROR = "Hdr-Error"

# Query parameters (api/apc/query.go)
QPARAM_WHAT = "what"
QPARAM_PROVIDER = "provider"
QPARAM_NAMESPACE = "namespace"
QPARAM_BCK_TO = "bck_to"
QPARAM_FLT_PRESENCE = "presence"
QPARAM_BSUMM_REMOTE = "bsumm_remote"
QPARAM_KEEP_REMOTE = "keep_bck_md"
QPARAM_ARCHPATH = "archpath"
QPARAM_ARCHREGX = "archregx"
QPARAM_ARCHMODE = "archmode"
QPARAM_FORCE = "frc"
QPARAM_PRIMARY_READY_REB = "prr"
QPARAM_OBJ_APPEND = "append_type"
QPARAM_OBJ_APPEND_HANDLE = "append_handle"
QPARAM_OBJ_TO = "object_to"
QPARAM_UUID = "uuid"
QPARAM_LATEST = "latest-ver"
QPARAM_SYNC = "synchronize"
QPARAM_NEW_CUSTOM = "set-new-custom"
QPARAM_MPT_UPLOAD_ID = "uploadId"
QPARAM_MPT_PART_NO = "partNumber"
QPARAM_PROPS = "props"
QPARAM_ETL_NAME = "etl_name"
QPARAM_ETL_ARGS = "etl_args"
QPARAM_LOG_SEV = "severity"
QPARAM_ALL_LOGS = "all"

# Values of `what=`
WHAT_SMAP = "smap"
WHAT_ONE_XACT_STATUS = "status"
WHAT_ALL_XACT_STATUS = "status_all"
WHAT_ALL_RUNNING_STATUS = "running_all"
WHAT_QUERY_XACT_STATS = "qryxstats"
WHAT_NODE_STATS_AND_STATUS = "node_status"
WHAT_LOG = "log"
WHAT_CLUSTER_CONFIG = "cluster_config"

# URL paths under /v1
URL_PATH_CLUSTER = "cluster"
URL_PATH_BUCKETS = "buckets"
URL_PATH_OBJECTS = "objects"
URL_PATH_HEALTH = "health"
URL_PATH_DAEMON = "daemon"
URL_PATH_REVERSE = "reverse"

# HTTP methods, lower case as the official SDK passes them to `requests`
HTTP_METHOD_GET = "get"
HTTP_METHOD_POST = "post"
HTTP_METHOD_DELETE = "delete"
HTTP_METHOD_PUT = "put"
HTTP_METHOD_HEAD = "head"
HTTP_METHOD_PATCH = "patch"

# Actions (api/apc/actmsg.go)
ACT_CREATE_BCK = "create-bck"
ACT_DESTROY_BCK = "destroy-bck"
ACT_COPY_BCK = "copy-bck"
ACT_MOVE_BCK = "move-bck"
ACT_LIST = "list"
ACT_PROMOTE = "promote"
ACT_BLOB_DOWNLOAD = "blob-download"
ACT_CHECK_LOCK = "check-lock"
ACT_START = "start"
ACT_XACT_STOP = "stop"
ACT_MPT_UPLOAD = "mpt-upload"
ACT_MPT_COMPLETE = "mpt-complete"
ACT_MPT_ABORT = "mpt-abort"
ACT_CREATE_NBI = "create-inventory"
ACT_DESTROY_NBI = "destroy-inventory"
ACT_SHOW_NBI = "show-inventory"
ACT_SUMMARY_BCK = "summary-bck"
ACT_EVICT_REMOTE_BCK = "evict-remote-bck"
ACT_ETL_BCK = "etl-bck"
# Multi-object (list/range/prefix) actions
ACT_DELETE_OBJECTS = "delete-listrange"
ACT_EVICT_OBJECTS = "evict-listrange"
ACT_PREFETCH_OBJECTS = "prefetch-listrange"
ACT_COPY_OBJECTS = "copy-listrange"
ACT_TRANSFORM_OBJECTS = "etl-listrange"
ACT_ARCHIVE_OBJECTS = "archive"

# Defaults
DEFAULT_CHUNK_SIZE = 32 * KIB
DEFAULT_PARALLEL_CHUNK_SIZE = 8 * MIB
DEFAULT_JOB_WAIT_TIMEOUT = 300
DEFAULT_JOB_POLL_TIME = 0.2
DEFAULT_COLD_GET_EST_BPS = 10 * GBIT
DEFAULT_COLD_GET_MAX_WAIT = 180
DEFAULT_DATASET_MAX_COUNT = 100000

UTF_ENCODING = "utf-8"

# Status codes the SDK treats specially
STATUS_OK = 200
STATUS_ACCEPTED = 202
STATUS_NO_CONTENT = 204
STATUS_PARTIAL_CONTENT = 206
STATUS_REDIRECT_PERM = 301
STATUS_REDIRECT_TMP = 307
STATUS_BAD_REQUEST = 400
STATUS_UNAUTHORIZED = 401
STATUS_FORBIDDEN = 403
STATUS_LOCKED = 423
STATUS_INTERNAL_SERVER_ERROR = 500
STATUS_BAD_GATEWAY = 502
STATUS_SERVICE_UNAVAILABLE = 503

# URL schemes
HTTP = "http://"
HTTPS = "https://"

# Environment variables
AIS_ENDPOINT = "AIS_ENDPOINT"
AIS_CLIENT_CA = "AIS_CLIENT_CA"
AIS_AUTHN_TOKEN = "AIS_AUTHN_TOKEN"
AIS_AUTHN_TOKEN_FILE = "AIS_AUTHN_TOKEN_FILE"  # the Go CLI's token file, JSON {"token": "<jwt>"}
AIS_CLIENT_CRT = "AIS_CRT"
AIS_CLIENT_KEY = "AIS_CRT_KEY"
AIS_READ_TIMEOUT = "AIS_READ_TIMEOUT"
AIS_CONNECT_TIMEOUT = "AIS_CONNECT_TIMEOUT"
AIS_MAX_CONN_POOL = "AIS_MAX_CONN_POOL"
AIS_SKIP_VERIFY = "AIS_SKIP_VERIFY"
AIS_SKIP_VERIFY_CRT = "AIS_SKIP_VERIFY_CRT"

# Time
GO_ZERO_TIME = "0001-01-01T00:00:00Z"
NANOSECONDS_IN_SECOND = 1_000_000_000

# Length of "bytes=" in an RFC 7233 range
BYTE_RANGE_PREFIX_LENGTH = 6

# Job snapshot "glob.id": one int64 packing joggers (low 10 bits), workers (next 10 bits) and
# the count of times the work channel was full (the remaining 44 bits).
JOGGER_COUNT_BITS = 10
WORKER_COUNT_BITS = 10
CHANNEL_COUNT_BITS = 64 - (JOGGER_COUNT_BITS + WORKER_COUNT_BITS)
JOGGER_COUNT_MASK = (1 << JOGGER_COUNT_BITS) - 1
WORKER_COUNT_SHIFT = JOGGER_COUNT_BITS
WORKER_COUNT_MASK = ((1 << WORKER_COUNT_BITS) - 1) << WORKER_COUNT_SHIFT
CHANNEL_COUNT_SHIFT = JOGGER_COUNT_BITS + WORKER_COUNT_BITS
CHANNEL_COUNT_MASK = ((1 << CHANNEL_COUNT_BITS) - 1) << CHANNEL_COUNT_SHIFT

# Seed of the xxhash64 digest used to place objects on targets (HRW)
XX_HASH_SEED = 1103515245

# GetBatch (api/apc/ml.go): URL path, query, request and response keys
URL_PATH_GB = "ml/moss"
QPARAM_COLOC = "coloc"
GB_MISSING_FILES_DIR = "__404__"
GB_IN = "in"
GB_OUTPUT_FMT = "mime"
GB_CONTINUE_ERR = "coer"
GB_ONLY_OBJ_NAME = "onob"
GB_STRM_GET = "strm"
GB_COLOC = "coloc"
GB_OBJNAME = "objname"
GB_BCK = "bucket"
GB_PROVIDER = "provider"
GB_UNAME = "uname"
GB_ARCHPATH = "archpath"
GB_START = "start"
GB_LENGTH = "length"
GB_OPAQUE = "opaque"
GB_ERR_MSG = "err_msg"
GB_SIZE = "size"
GB_OUT = "out"
GB_UUID = "uuid"

# ETL, dSort and AuthN REST paths, queries and headers (features served by a cluster with them)
URL_PATH_ETL = "etl"
URL_PATH_ETL_LOGS = "logs"
URL_PATH_DSORT = "sort"
DSORT_ABORT = "abort"
DSORT_UUID = "uuid"
DEFAULT_DSORT_WAIT_TIMEOUT = 300
URL_PATH_AUTHN_USERS = "users"
URL_PATH_AUTHN_CLUSTERS = "clusters"
URL_PATH_AUTHN_ROLES = "roles"
URL_PATH_AUTHN_TOKENS = "tokens"
QPARAM_ETL_PIPELINE = "etl_pipeline"
QPARAM_ETL_FQN = "etl_fqn"
ETL_WS_PIPELINE = "pipeline"  # keys of an ETL websocket's control message
ETL_WS_FQN = "fqn"
ETL_WS_PATH = "path"
HEADER_DIRECT_PUT_LENGTH = HEADER_PREFIX + "Direct-Put-Length"
# An ETL server answers 503 with this reason when AIS should retry the whole direct PUT.
HEADER_ETL_RETRY_REASON = HEADER_PREFIX + "Etl-Retry-Reason"
ETL_RETRY_REASON_DIRECT_PUT_TRANSIENT = "direct-put-transient"
AIS_DIRECT_PUT_CHUNK_SIZE = "AIS_DIRECT_PUT_CHUNK_SIZE"  # environment of an ETL container
AIS_DIRECT_PUT_RETRIES = "AIS_DIRECT_PUT_RETRIES"

# Client defaults
AWS_DEFAULT_REGION = "us-east-1"
DEFAULT_LOG_FORMAT = "%(asctime)s %(levelname)s: %(message)s"
DEFAULT_MAX_BUFFER_SIZE = 64 * KIB

# Multipart bodies (GetBatch's multipart/mixed reply)
HTTP_BOUNDARY_REGEX = r"boundary=([^;,\s]+)"
MULTIPART_MARKER = b"--"
WIN_LINE_END = b"\r\n\r\n"
UNIX_LINE_END = b"\n\n"
ASCII_CR = 13
ASCII_LF = 10
ASCII_SPACE = 32
ASCII_TAB = 9
WHITESPACE_CHARS = {ASCII_CR, ASCII_LF, ASCII_SPACE, ASCII_TAB}

# Filler text the official SDK exports (its examples and tests use it)
LOREM = (
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt"
    " ut labore et dolore magna aliqua."
)
DUIS = (
    "Duis aute irure dolor in reprehenderit in voluptate velit esse cillum dolore eu fugiat nulla"
    " pariatur."
)
