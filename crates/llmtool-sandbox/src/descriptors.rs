//! The process's limit on open files, raised for a server that runs smart tools: each file a
//! guest holds open is one of the host's descriptors (at most [`crate::Limits::open_files`]
//! a run), and a server runs several at once beside its own sockets and database files.

use rustix::process::{Resource, getrlimit, setrlimit};

/// Raises the soft limit on open files to the hard one; the limit now in force (`None` when
/// unlimited or unknown). A limit that cannot be raised is left as it was.
pub fn raise_open_files_limit() -> Option<u64> {
    let mut limit = getrlimit(Resource::Nofile);
    if limit.current < limit.maximum {
        limit.current = limit.maximum;
        if setrlimit(Resource::Nofile, limit).is_err() {
            return getrlimit(Resource::Nofile).current;
        }
    }
    limit.current
}
