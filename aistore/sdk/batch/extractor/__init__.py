"""Archive extractors of the Batch API: one per archive family (tar, zip).

Example:
    >>> from aistore.sdk.batch.extractor.extractor_registry import get_extractor
    >>> type(get_extractor(".tgz")).__name__
    'TarStreamExtractor'
"""
