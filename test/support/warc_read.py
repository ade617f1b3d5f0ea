"""Reads WARC files with Python's warcio (independent of the writer) and prints one JSON line per
record: type, target URI, profile, digests as written, digests recomputed here, HTTP status."""
import base64
import hashlib
import json
import sys

from warcio.archiveiterator import ArchiveIterator


def sha1_b32(data):
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode("ascii")


for path in sys.argv[1:]:
    with open(path, "rb") as fh:
        # check_digests='raise': warcio itself verifies WARC-Block-Digest and WARC-Payload-Digest.
        for rec in ArchiveIterator(fh, check_digests="raise"):
            h = rec.rec_headers
            out = {
                "file": path,
                "type": rec.rec_type,
                "uri": h.get_header("WARC-Target-URI"),
                "version": h.protocol,
                "date": h.get_header("WARC-Date"),
                "ip": h.get_header("WARC-IP-Address"),
                "profile": h.get_header("WARC-Profile"),
                "refersTo": h.get_header("WARC-Refers-To"),
                "payloadDigest": h.get_header("WARC-Payload-Digest"),
                "blockDigest": h.get_header("WARC-Block-Digest"),
            }
            if rec.http_headers is not None:
                out["status"] = rec.http_headers.get_statuscode()
                out["contentType"] = rec.http_headers.get_header("Content-Type")
                out["contentEncoding"] = rec.http_headers.get_header("Content-Encoding")
            if rec.rec_type == "response":
                payload = rec.content_stream().read()
                out["payloadLength"] = len(payload)
                out["payloadSha1"] = sha1_b32(payload)
            else:
                rec.content_stream().read()
            print(json.dumps(out))
