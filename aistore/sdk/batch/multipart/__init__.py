"""Multipart decoding of GetBatch replies (`streaming_get=False`).

Example:
    >>> from aistore.sdk.batch.multipart.multipart_decoder import MultipartDecoder
    >>> MultipartDecoder().encoding
    'utf-8'
"""
