#!/usr/bin/env python3
"""A meguri `changes` consumer in Python with confluent-kafka (librdkafka), written from
docs/topics.md alone: it reads `changes` with isolation.level=read_committed, follows each change's
`page` pointer to its `pages` record, decodes the record's framing, content encoding and charset,
and checks the documented definitions against what it reads:

  - `md5` is the MD5 of the page's text (the body decoded with its charset, re-encoded as UTF-8);
  - `fingerprint` is 16 lower-case hex digits;
  - `title` is the first <title>'s text, entities decoded, whitespace collapsed, trimmed;
  - `page.topic` is the full (prefixed) topic name and `page.offset` a decimal string.

It prints one JSON line per change, then one {"summary": ...} line, and exits 1 when a check fails.

    python consumer.py --brokers 127.0.0.1:9092 [--topic-prefix crawl.] [--group my-feed]

Needs `pip install -r requirements.txt` (confluent-kafka; Brotli for `br` bodies).
"""
import argparse
import gzip
import hashlib
import html
import json
import re
import struct
import sys
import time
import zlib

import brotli
from confluent_kafka import Consumer, KafkaError, TopicPartition

HEX16 = re.compile(r"^[0-9a-f]{16}$")
WHITESPACE = re.compile(r"[ \t\n\f\r]+")
TITLE = re.compile(rb"<title\b[^>]*>(.*?)</title\s*>", re.IGNORECASE | re.DOTALL)
META_CHARSET = re.compile(rb"""<meta\b[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9_:.+-]+)""", re.IGNORECASE)

# WHATWG encoding labels (the ones pages use) to Python codecs. Browsers read Shift_JIS and its
# aliases as windows-31j (cp932), and ISO-8859-1/US-ASCII as windows-1252: so does meguri.
LABELS = {
    "utf-8": "utf-8", "utf8": "utf-8", "unicode-1-1-utf-8": "utf-8",
    "shift_jis": "cp932", "shift-jis": "cp932", "sjis": "cp932", "windows-31j": "cp932", "ms_kanji": "cp932", "x-sjis": "cp932", "csshiftjis": "cp932",
    "euc-jp": "euc_jp", "iso-2022-jp": "iso2022_jp",
    "iso-8859-1": "cp1252", "latin1": "cp1252", "l1": "cp1252", "us-ascii": "cp1252", "ascii": "cp1252", "windows-1252": "cp1252", "cp1252": "cp1252",
    "iso-8859-15": "iso8859_15", "windows-1251": "cp1251", "koi8-r": "koi8_r", "gbk": "gbk", "gb2312": "gbk", "gb18030": "gb18030", "big5": "big5", "euc-kr": "cp949",
    "utf-16le": "utf-16-le", "utf-16be": "utf-16-be", "utf-16": "utf-16-le",
}


def decode_framing(value):
    """A pages value: b"MGP", a format byte (1 or 2), a 32-bit big-endian header length, the JSON header, the body."""
    if value[:3] != b"MGP" or value[3] not in (1, 2):
        raise ValueError("not a pages record of framing version 1 or 2")
    (n,) = struct.unpack(">I", value[4:8])
    header = json.loads(value[8:8 + n].decode("utf-8"))
    body = value[8 + n:] if "bodyBytes" in header else None
    if body is not None and len(body) != header["bodyBytes"]:
        raise ValueError(f"body of {len(body)} bytes, header says {header['bodyBytes']}")
    return header, body


def content_decode(header, body):
    """Undoes `contentEncoding` (absent: the body is already decoded), at most `decodeLimit` bytes."""
    encoding = header.get("contentEncoding")
    if encoding is None:
        return body
    if encoding == "gzip":
        out = gzip.decompress(body)
    elif encoding == "br":
        out = brotli.decompress(body)
    elif encoding == "deflate":
        out = zlib.decompress(body) if body[0] & 0x0F == 8 else zlib.decompress(body, -15)
    else:
        raise ValueError(f"unknown contentEncoding {encoding}")
    return out[: header.get("decodeLimit", len(out))]


def charset_of(header, body):
    """The charset precedence of docs/topics.md: BOM, Content-Type charset, <meta> in the first 1,024 bytes, windows-1252."""
    if body.startswith(b"\xef\xbb\xbf"):
        return "utf-8", 3
    if body.startswith(b"\xff\xfe"):
        return "utf-16-le", 2
    if body.startswith(b"\xfe\xff"):
        return "utf-16-be", 2
    content_type = header.get("headers", {}).get("content-type", "")
    m = re.search(r"charset\s*=\s*\"?([^\";\s]+)", content_type, re.IGNORECASE)
    if m and m.group(1).lower() in LABELS:
        return LABELS[m.group(1).lower()], 0
    m = META_CHARSET.search(body[:1024])
    if m and m.group(1).decode("ascii").lower() in LABELS:
        label = LABELS[m.group(1).decode("ascii").lower()]
        # A <meta> that names UTF-16 means UTF-8 (the bytes were readable as ASCII).
        return ("utf-8" if label.startswith("utf-16") else label), 0
    return "cp1252", 0


def page_text(header, body):
    charset, skip = charset_of(header, body)
    # Bytes the charset does not define, and invalid sequences, become U+FFFD (as meguri reads them).
    return body[skip:].decode(charset, errors="replace"), charset


def title_of(body_text_bytes):
    m = TITLE.search(body_text_bytes)
    if not m:
        return None
    title = WHITESPACE.sub(" ", html.unescape(m.group(1).decode("utf-8"))).strip()[:1024].rstrip()
    return title or None


def read_changes(brokers, topic, group, idle_s):
    consumer = Consumer({
        "bootstrap.servers": brokers,
        "group.id": group,
        # The scheduler writes changes in transactions: without this, records of aborted ones come too.
        "isolation.level": "read_committed",
        "auto.offset.reset": "earliest",
        "enable.partition.eof": True,
    })
    partitions = len(consumer.list_topics(topic, timeout=30).topics[topic].partitions)
    consumer.subscribe([topic])
    at_end, changes, last = set(), [], time.monotonic()
    while len(at_end) < partitions and time.monotonic() - last < idle_s:
        msg = consumer.poll(1.0)
        if msg is None:
            continue
        if msg.error():
            if msg.error().code() == KafkaError._PARTITION_EOF:
                at_end.add(msg.partition())
                continue
            raise RuntimeError(msg.error())
        last = time.monotonic()
        at_end.discard(msg.partition())
        changes.append((msg.key().decode("utf-8"), json.loads(msg.value())))
    if changes:
        consumer.commit(asynchronous=False)
    consumer.close()
    return changes, len(at_end) == partitions


def read_page(reader, pointer):
    # Kafka offsets are 64-bit: the pointer carries them as decimal strings.
    reader.assign([TopicPartition(pointer["topic"], pointer["partition"], int(pointer["offset"]))])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        msg = reader.poll(1.0)
        if msg is None or (msg.error() and msg.error().code() == KafkaError._PARTITION_EOF):
            continue
        if msg.error():
            raise RuntimeError(msg.error())
        if msg.offset() != int(pointer["offset"]):
            raise RuntimeError(f"asked for offset {pointer['offset']}, got {msg.offset()}")
        return msg.key().decode("utf-8"), msg.value()
    raise TimeoutError(f"no record at {pointer}")


def check_change(key, change, reader, prefix):
    """One output line: what the change says, what its page says, and the documented checks."""
    out = {"kind": change["kind"], "url": change["url"], "title": change.get("title"), "problems": []}
    problems = out["problems"]
    if change.get("v") != 1:
        problems.append(f"schema version {change.get('v')}")
    if key != change["url"]:
        problems.append("the record key is not the URL")
    if "fingerprint" in change and not HEX16.match(change["fingerprint"]):
        problems.append(f"fingerprint {change['fingerprint']} is not 16 hex digits")
    pointer = change.get("page")
    if pointer is None:
        if change["kind"] != "gone":
            problems.append("no page pointer")
        return out
    if pointer["topic"] != prefix + "pages" or not re.fullmatch(r"\d+", pointer["offset"]):
        problems.append(f"pointer {pointer}")
    page_key, value = read_page(reader, pointer)
    header, raw = decode_framing(value)
    out["pageKey"] = page_key
    if header["request"]["url"] != change["url"] and header.get("finalUrl") != change["url"]:
        problems.append(f"the page at the pointer is {header['request']['url']}")
    if raw is None:
        problems.append("the page has no body")
        return out
    body = content_decode(header, raw)
    text, charset = page_text(header, body)
    utf8 = text.encode("utf-8")
    out["charset"] = charset
    out["md5OfText"] = hashlib.md5(utf8).hexdigest()
    out["md5OfBytes"] = hashlib.md5(body).hexdigest()
    if "md5" in change and change["md5"] != out["md5OfText"]:
        problems.append(f"md5 {change['md5']} is not the MD5 of the decoded text ({out['md5OfText']})")
    if title_of(utf8) != change.get("title"):
        problems.append(f"title {change.get('title')!r}, the page's <title> reads {title_of(utf8)!r}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--brokers", required=True)
    ap.add_argument("--topic-prefix", default="")
    ap.add_argument("--group", default="python-change-feed")
    ap.add_argument("--idle-seconds", type=float, default=60.0, help="give up when nothing arrives for this long")
    args = ap.parse_args()
    changes, complete = read_changes(args.brokers, args.topic_prefix + "changes", args.group, args.idle_seconds)
    reader = Consumer({"bootstrap.servers": args.brokers, "group.id": args.group + "-pages", "isolation.level": "read_committed", "enable.auto.commit": False})
    failed = 0
    kinds = {}
    for key, change in changes:
        line = check_change(key, change, reader, args.topic_prefix)
        failed += 1 if line["problems"] else 0
        kinds[change["kind"]] = kinds.get(change["kind"], 0) + 1
        print(json.dumps(line), flush=True)
    reader.close()
    print(json.dumps({"summary": {"changes": len(changes), "kinds": kinds, "failed": failed, "readToEnd": complete}}), flush=True)
    return 1 if failed or not complete or not changes else 0


if __name__ == "__main__":
    sys.exit(main())
