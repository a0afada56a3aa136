"""kombu's file-system transport (the embedded broker), safe against a reader racing a writer.

kombu writes a message file in place and its reader claims (moves) a file the moment it is
listed, so a worker could read a half-written message; the JSONDecodeError then stopped the
worker ("Unrecoverable error"). Here the writer writes to a hidden name in the same folder and
renames it into place (a message file is complete when it appears), and the reader, for files
written by anyone else, re-reads a claimed file that does not parse yet and, if it still does
not, sets it aside under `unreadable/` with a log line instead of failing.
Settings select it with CELERY_BROKER_TRANSPORT when CELERY_BROKER_URL is filesystem://.
"""

from __future__ import annotations

import logging
import os
import time
import uuid
from contextlib import suppress
from functools import cached_property

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.transport.virtual import Empty
from kombu.utils.encoding import bytes_to_str, str_to_bytes
from kombu.utils.json import dumps, loads

log = logging.getLogger(__name__)

# Re-reads of a claimed message that does not parse yet: 0.1 + 0.2 + 0.4 + 0.8 s, then aside.
READ_ATTEMPTS = 5
READ_FIRST_WAIT = 0.1
WRITING_PREFIX = ".writing-"  # never "<queue>.msg" after the first dot: no reader lists it


class Channel(filesystem.Channel):
    def _put(self, queue, payload, **kwargs):
        name = f"{int(round(time.monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = os.path.join(self.data_folder_out, f"{WRITING_PREFIX}{uuid.uuid4()}")
        try:
            with open(partial, "wb") as f:
                f.write(str_to_bytes(dumps(payload)))
            os.replace(partial, final)  # atomic within one folder
        except OSError as exc:
            with suppress(OSError):
                os.unlink(partial)
            raise ChannelError(f"Cannot add file {final!r} to directory") from exc

    @cached_property
    def claim_folder(self) -> str:
        """Where a message is moved to be read: on the queue's file system (a writer still holding
        the file keeps writing into it), never the system temp folder kombu uses."""
        folder = self.transport_options.get("processed_folder") or os.path.join(
            self.data_folder_in, ".claimed"
        )
        os.makedirs(folder, exist_ok=True)
        return folder

    @property
    def unreadable_folder(self) -> str:
        folder = os.path.join(os.path.dirname(os.path.abspath(self.claim_folder)), "unreadable")
        os.makedirs(folder, exist_ok=True)
        return folder

    def _get(self, queue):
        wanted = f"{queue}.msg"
        for filename in sorted(os.listdir(self.data_folder_in)):
            if filename.partition(".")[2] != wanted:
                continue
            claimed = os.path.join(self.claim_folder, filename)
            try:
                os.rename(os.path.join(self.data_folder_in, filename), claimed)
            except OSError:
                continue  # another worker took it
            payload = self._read_claimed(claimed)
            if payload is not None:
                return payload
        raise Empty()

    def _read_claimed(self, path: str):
        """The message in a claimed file, re-read while it does not parse; None once set aside."""
        wait, error = READ_FIRST_WAIT, None
        for attempt in range(READ_ATTEMPTS):
            try:
                with open(path, "rb") as f:
                    payload = loads(bytes_to_str(f.read()))
            except OSError as exc:
                raise ChannelError(f"Cannot read file {path!r} from queue.") from exc
            except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError: not all written yet
                error = exc
                if attempt < READ_ATTEMPTS - 1:
                    time.sleep(wait)
                    wait *= 2
                continue
            if not self.store_processed:
                with suppress(OSError):
                    os.remove(path)
            return payload
        aside = os.path.join(self.unreadable_folder, os.path.basename(path))
        with suppress(OSError):
            os.replace(path, aside)
        size = os.path.getsize(aside) if os.path.exists(aside) else -1
        log.error(
            "set aside an unreadable broker message (%d bytes) as %s after %d reads: %s",
            size,
            aside,
            READ_ATTEMPTS,
            error,
        )
        return None


class Transport(filesystem.Transport):
    Channel = Channel
