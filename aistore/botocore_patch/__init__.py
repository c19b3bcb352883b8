"""Make boto3/botocore follow the redirects an AIS S3 endpoint answers with.

AIS proxies redirect S3 requests to targets with 301/302/307 and a `Location` header, which
botocore does not follow by itself. `from aistore.botocore_patch import botocore` patches
botocore's S3 redirector to follow them (at most three per operation). Our server serves
every request itself and never redirects, so with it the patch never acts.

Example:
    >>> from aistore.botocore_patch import botocore  # doctest: +SKIP
"""

__all__: list[str] = []
