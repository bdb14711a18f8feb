//! The WASI imports the guest really gets: an empty environment, no arguments, standard
//! output and error captured for the run's result, an empty standard input, clocks, random
//! bytes from the host, and the standard library read-only at `/python` — the same view the
//! `wasm` backend gives its guest. Every path is opened beneath the standard library's
//! directory with cap-std, so `..`, absolute paths and symlinks cannot leave it.

use std::os::unix::fs::FileExt as _;

use cap_std::fs::{Metadata, MetadataExt as _};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hyperlight_common::resource::BorrowedResourceGuard;

use super::bindings::r#wasi::r#cli;
use super::bindings::r#wasi::r#clocks::{self, r#wall_clock::Datetime};
use super::bindings::r#wasi::r#filesystem::{self as filesystem, r#types as fs};
use super::bindings::r#wasi::r#io::{self as io, r#error, r#poll, r#streams};
use super::bindings::r#wasi::r#random;
use super::resources::{Descriptor, DirectoryEntries, InputStream, IoError, OutputStream, Pollable};
use super::state::Guest;
use crate::guest::manifest::STDLIB_GUEST_PATH;
use crate::sandbox::live::lock;

type Borrowed<'a, T> = BorrowedResourceGuard<'a, T>;
type Negative = hyperlight_common::component::Negative;
type StreamError = streams::StreamError<IoError>;
type FsResult<T> = Result<T, fs::ErrorCode>;

/// What a directory entry is, as the guest is told.
pub(crate) type EntryType = fs::DescriptorType;

/// The most one read hands the guest.
const MAX_READ: u64 = 1 << 20;

impl cli::Environment<Negative> for Guest {
    fn get_environment(&mut self) -> Vec<(String, String)> {
        Vec::new()
    }

    fn get_arguments(&mut self) -> Vec<String> {
        Vec::new()
    }

    fn initial_cwd(&mut self) -> Option<String> {
        None
    }
}

impl cli::Exit<Negative> for Guest {
    fn exit(&mut self, status: Result<(), ()>) {
        self.exited(i32::from(status.is_err()));
    }
}

impl cli::Stdin<Negative, InputStream> for Guest {
    fn get_stdin(&mut self) -> InputStream {
        InputStream::Empty
    }
}

impl cli::Stdout<Negative, OutputStream> for Guest {
    fn get_stdout(&mut self) -> OutputStream {
        OutputStream::Capture(self.stdout.clone())
    }
}

impl cli::Stderr<Negative, OutputStream> for Guest {
    fn get_stderr(&mut self) -> OutputStream {
        OutputStream::Capture(self.stderr.clone())
    }
}

impl clocks::MonotonicClock<Negative, Pollable> for Guest {
    fn now(&mut self) -> u64 {
        monotonic_now()
    }

    fn resolution(&mut self) -> u64 {
        1_000
    }

    fn subscribe_instant(&mut self, when: u64) -> Pollable {
        Pollable::at(Instant::now() + Duration::from_nanos(when.saturating_sub(monotonic_now())))
    }

    fn subscribe_duration(&mut self, when: u64) -> Pollable {
        Pollable::at(Instant::now() + Duration::from_nanos(when))
    }
}

impl clocks::WallClock<Negative> for Guest {
    fn now(&mut self) -> Datetime {
        let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        Datetime { seconds: since.as_secs(), nanoseconds: since.subsec_nanos() }
    }

    fn resolution(&mut self) -> Datetime {
        Datetime { seconds: 0, nanoseconds: 1_000 }
    }
}

/// The monotonic clock since boot: a guest restored from a snapshot that another process made
/// sees it go on, not start again.
fn monotonic_now() -> u64 {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    u64::try_from(now.tv_sec).unwrap_or(0) * 1_000_000_000 + u64::try_from(now.tv_nsec).unwrap_or(0)
}

/// Random bytes from the kernel; where it has none to give, from the standard library's
/// per-process random keys (which the kernel seeded).
fn random_bytes(len: u64) -> Vec<u8> {
    use std::hash::{BuildHasher as _, Hasher as _, RandomState};
    let mut bytes = vec![0; usize::try_from(len.min(MAX_READ)).unwrap_or(0)];
    let mut filled = 0;
    while filled < bytes.len() {
        match rustix::rand::getrandom(&mut bytes[filled..], rustix::rand::GetRandomFlags::empty()) {
            Ok(0) | Err(_) => break,
            Ok(n) => filled += n,
        }
    }
    for chunk in bytes[filled..].chunks_mut(8) {
        let word = RandomState::new().build_hasher().finish().to_le_bytes();
        chunk.copy_from_slice(&word[..chunk.len()]);
    }
    bytes
}

fn random_u64() -> u64 {
    random_bytes(8).iter().fold(0, |acc, &b| (acc << 8) | u64::from(b))
}

impl random::Random<Negative> for Guest {
    fn get_random_bytes(&mut self, len: u64) -> Vec<u8> {
        random_bytes(len)
    }

    fn get_random_u64(&mut self) -> u64 {
        random_u64()
    }
}

impl random::Insecure<Negative> for Guest {
    fn get_insecure_random_bytes(&mut self, len: u64) -> Vec<u8> {
        random_bytes(len)
    }

    fn get_insecure_random_u64(&mut self) -> u64 {
        random_u64()
    }
}

impl random::InsecureSeed<Negative> for Guest {
    fn insecure_seed(&mut self) -> (u64, u64) {
        (random_u64(), random_u64())
    }
}

impl error::Error<Negative> for Guest {
    type T = IoError;

    fn to_debug_string(&mut self, error: Borrowed<'_, IoError>) -> String {
        error.0.clone()
    }
}

impl io::Error<Negative> for Guest {}

impl poll::Pollable<Negative> for Guest {
    type T = Pollable;

    fn ready(&mut self, pollable: Borrowed<'_, Pollable>) -> bool {
        pollable.when().is_none_or(|when| when <= Instant::now())
    }

    fn block(&mut self, pollable: Borrowed<'_, Pollable>) {
        self.wait_until(pollable.when());
    }
}

impl io::Poll<Negative> for Guest {
    fn poll(&mut self, pollables: Vec<Borrowed<'_, Pollable>>) -> Vec<u32> {
        let ready = |pollables: &[Borrowed<'_, Pollable>]| -> Vec<u32> {
            let now = Instant::now();
            (0..).zip(pollables).filter(|(_, p)| p.when().is_none_or(|when| when <= now)).map(|(i, _)| i).collect()
        };
        let found = ready(&pollables);
        if !found.is_empty() {
            return found;
        }
        self.wait_until(pollables.iter().filter_map(|p| p.when()).min());
        ready(&pollables)
    }
}

impl streams::InputStream<Negative, IoError, Pollable> for Guest {
    type T = InputStream;

    fn read(&mut self, stream: Borrowed<'_, InputStream>, len: u64) -> Result<Vec<u8>, StreamError> {
        match &*stream {
            InputStream::Empty => Err(StreamError::Closed),
            InputStream::File { file, offset } => {
                let mut offset = lock(offset);
                let mut bytes = vec![0; usize::try_from(len.min(MAX_READ)).unwrap_or(0)];
                let read = file
                    .read_at(&mut bytes, *offset)
                    .map_err(|err| StreamError::LastOperationFailed(IoError(err.to_string())))?;
                if read == 0 && !bytes.is_empty() {
                    return Err(StreamError::Closed);
                }
                bytes.truncate(read);
                *offset += read as u64;
                Ok(bytes)
            }
        }
    }

    fn blocking_read(&mut self, stream: Borrowed<'_, InputStream>, len: u64) -> Result<Vec<u8>, StreamError> {
        streams::InputStream::read(self, stream, len)
    }

    fn skip(&mut self, stream: Borrowed<'_, InputStream>, len: u64) -> Result<u64, StreamError> {
        streams::InputStream::read(self, stream, len).map(|bytes| bytes.len() as u64)
    }

    fn blocking_skip(&mut self, stream: Borrowed<'_, InputStream>, len: u64) -> Result<u64, StreamError> {
        streams::InputStream::skip(self, stream, len)
    }

    fn subscribe(&mut self, _: Borrowed<'_, InputStream>) -> Pollable {
        Pollable::ready()
    }
}

/// How much the guest may write in one call: what the capture keeps is bounded anyway.
const WRITE_ROOM: u64 = 1 << 20;

fn write_to(stream: &OutputStream, bytes: &[u8]) {
    match stream {
        OutputStream::Capture(capture) => lock(capture).push(&String::from_utf8_lossy(bytes)),
    }
}

impl streams::OutputStream<Negative, IoError, InputStream, Pollable> for Guest {
    type T = OutputStream;

    fn check_write(&mut self, _: Borrowed<'_, OutputStream>) -> Result<u64, StreamError> {
        Ok(WRITE_ROOM)
    }

    fn write(&mut self, stream: Borrowed<'_, OutputStream>, contents: Vec<u8>) -> Result<(), StreamError> {
        write_to(&stream, &contents);
        Ok(())
    }

    fn blocking_write_and_flush(
        &mut self,
        stream: Borrowed<'_, OutputStream>,
        contents: Vec<u8>,
    ) -> Result<(), StreamError> {
        write_to(&stream, &contents);
        Ok(())
    }

    fn flush(&mut self, _: Borrowed<'_, OutputStream>) -> Result<(), StreamError> {
        Ok(())
    }

    fn blocking_flush(&mut self, _: Borrowed<'_, OutputStream>) -> Result<(), StreamError> {
        Ok(())
    }

    fn subscribe(&mut self, _: Borrowed<'_, OutputStream>) -> Pollable {
        Pollable::ready()
    }

    fn write_zeroes(&mut self, stream: Borrowed<'_, OutputStream>, len: u64) -> Result<(), StreamError> {
        write_to(&stream, &vec![0; usize::try_from(len.min(WRITE_ROOM)).unwrap_or(0)]);
        Ok(())
    }

    fn blocking_write_zeroes_and_flush(
        &mut self,
        stream: Borrowed<'_, OutputStream>,
        len: u64,
    ) -> Result<(), StreamError> {
        streams::OutputStream::write_zeroes(self, stream, len)
    }

    fn splice(
        &mut self,
        _: Borrowed<'_, OutputStream>,
        _: Borrowed<'_, InputStream>,
        _: u64,
    ) -> Result<u64, StreamError> {
        Err(StreamError::LastOperationFailed(IoError("splicing streams is not supported".into())))
    }

    fn blocking_splice(
        &mut self,
        stream: Borrowed<'_, OutputStream>,
        source: Borrowed<'_, InputStream>,
        len: u64,
    ) -> Result<u64, StreamError> {
        streams::OutputStream::splice(self, stream, source, len)
    }
}

impl io::Streams<Negative, IoError, Pollable> for Guest {}

fn io_error(err: &std::io::Error) -> fs::ErrorCode {
    use std::io::ErrorKind as Kind;
    match err.kind() {
        Kind::NotFound => fs::ErrorCode::NoEntry,
        Kind::PermissionDenied => fs::ErrorCode::NotPermitted,
        Kind::AlreadyExists => fs::ErrorCode::Exist,
        Kind::NotADirectory => fs::ErrorCode::NotDirectory,
        Kind::IsADirectory => fs::ErrorCode::IsDirectory,
        Kind::InvalidInput | Kind::InvalidFilename => fs::ErrorCode::Invalid,
        _ if err.raw_os_error() == Some(libc_eloop()) => fs::ErrorCode::Loop,
        _ => fs::ErrorCode::Access,
    }
}

/// `ELOOP`, which cap-std returns for a path that would leave the directory through a symlink.
fn libc_eloop() -> i32 {
    rustix::io::Errno::LOOP.raw_os_error()
}

fn kind_of(file_type: cap_std::fs::FileType) -> fs::DescriptorType {
    if file_type.is_dir() {
        fs::DescriptorType::Directory
    } else if file_type.is_file() {
        fs::DescriptorType::RegularFile
    } else if file_type.is_symlink() {
        fs::DescriptorType::SymbolicLink
    } else {
        fs::DescriptorType::Unknown
    }
}

fn datetime(time: std::io::Result<SystemTime>) -> Option<Datetime> {
    let since = time.ok()?.duration_since(UNIX_EPOCH).ok()?;
    Some(Datetime { seconds: since.as_secs(), nanoseconds: since.subsec_nanos() })
}

fn stat_of(metadata: &Metadata) -> fs::DescriptorStat<Datetime> {
    fs::DescriptorStat {
        r#type: kind_of(metadata.file_type()),
        link_count: metadata.nlink(),
        size: metadata.len(),
        data_access_timestamp: datetime(metadata.accessed().map(cap_std::time::SystemTime::into_std)),
        data_modification_timestamp: datetime(metadata.modified().map(cap_std::time::SystemTime::into_std)),
        status_change_timestamp: None,
    }
}

fn hash_of(metadata: &Metadata) -> fs::MetadataHashValue {
    fs::MetadataHashValue { lower: metadata.ino(), upper: metadata.dev() }
}

fn metadata_of(descriptor: &Descriptor) -> FsResult<Metadata> {
    match descriptor {
        Descriptor::Dir(dir) => dir.dir_metadata(),
        Descriptor::File(file) => Metadata::from_file(file),
    }
    .map_err(|err| io_error(&err))
}

/// The directory a path is resolved in, or `NotDirectory`.
fn dir_of(descriptor: &Descriptor) -> FsResult<&cap_std::fs::Dir> {
    match descriptor {
        Descriptor::Dir(dir) => Ok(dir),
        Descriptor::File(_) => Err(fs::ErrorCode::NotDirectory),
    }
}

fn metadata_at(descriptor: &Descriptor, flags: &fs::PathFlags, path: &str) -> FsResult<Metadata> {
    let dir = dir_of(descriptor)?;
    let metadata = if flags.symlink_follow { dir.metadata(path) } else { dir.symlink_metadata(path) };
    metadata.map_err(|err| io_error(&err))
}

const READ_ONLY: FsResult<()> = Err(fs::ErrorCode::ReadOnly);

impl fs::Descriptor<Negative, Datetime, DirectoryEntries, InputStream, OutputStream> for Guest {
    type T = Descriptor;

    fn read_via_stream(&mut self, descriptor: Borrowed<'_, Descriptor>, offset: u64) -> FsResult<InputStream> {
        match &*descriptor {
            Descriptor::File(file) => Ok(InputStream::File { file: file.clone(), offset: Mutex::new(offset) }),
            Descriptor::Dir(_) => Err(fs::ErrorCode::IsDirectory),
        }
    }

    fn write_via_stream(&mut self, _: Borrowed<'_, Descriptor>, _: u64) -> FsResult<OutputStream> {
        Err(fs::ErrorCode::ReadOnly)
    }

    fn append_via_stream(&mut self, _: Borrowed<'_, Descriptor>) -> FsResult<OutputStream> {
        Err(fs::ErrorCode::ReadOnly)
    }

    fn advise(&mut self, _: Borrowed<'_, Descriptor>, _: u64, _: u64, _: fs::Advice) -> FsResult<()> {
        Ok(())
    }

    fn sync_data(&mut self, _: Borrowed<'_, Descriptor>) -> FsResult<()> {
        Ok(())
    }

    fn get_type(&mut self, descriptor: Borrowed<'_, Descriptor>) -> FsResult<fs::DescriptorType> {
        Ok(match &*descriptor {
            Descriptor::Dir(_) => fs::DescriptorType::Directory,
            Descriptor::File(_) => fs::DescriptorType::RegularFile,
        })
    }

    fn set_size(&mut self, _: Borrowed<'_, Descriptor>, _: u64) -> FsResult<()> {
        READ_ONLY
    }

    fn set_times(
        &mut self,
        _: Borrowed<'_, Descriptor>,
        _: fs::NewTimestamp<Datetime>,
        _: fs::NewTimestamp<Datetime>,
    ) -> FsResult<()> {
        READ_ONLY
    }

    fn read(&mut self, descriptor: Borrowed<'_, Descriptor>, length: u64, offset: u64) -> FsResult<(Vec<u8>, bool)> {
        let Descriptor::File(file) = &*descriptor else { return Err(fs::ErrorCode::IsDirectory) };
        let mut bytes = vec![0; usize::try_from(length.min(MAX_READ)).unwrap_or(0)];
        let read = file.read_at(&mut bytes, offset).map_err(|err| io_error(&err))?;
        bytes.truncate(read);
        Ok((bytes, read == 0))
    }

    fn write(&mut self, _: Borrowed<'_, Descriptor>, _: Vec<u8>, _: u64) -> FsResult<u64> {
        Err(fs::ErrorCode::ReadOnly)
    }

    fn read_directory(&mut self, descriptor: Borrowed<'_, Descriptor>) -> FsResult<DirectoryEntries> {
        let dir = dir_of(&descriptor)?;
        let mut entries = Vec::new();
        for entry in dir.entries().map_err(|err| io_error(&err))? {
            let entry = entry.map_err(|err| io_error(&err))?;
            let kind = entry.file_type().map_or(fs::DescriptorType::Unknown, kind_of);
            entries.push((entry.file_name().to_string_lossy().into_owned(), kind));
        }
        Ok(DirectoryEntries(Mutex::new(entries.into_iter())))
    }

    fn sync(&mut self, _: Borrowed<'_, Descriptor>) -> FsResult<()> {
        Ok(())
    }

    fn create_directory_at(&mut self, _: Borrowed<'_, Descriptor>, _: String) -> FsResult<()> {
        READ_ONLY
    }

    fn stat(&mut self, descriptor: Borrowed<'_, Descriptor>) -> FsResult<fs::DescriptorStat<Datetime>> {
        metadata_of(&descriptor).map(|metadata| stat_of(&metadata))
    }

    fn readlink_at(&mut self, descriptor: Borrowed<'_, Descriptor>, path: String) -> FsResult<String> {
        let link = dir_of(&descriptor)?.read_link(&path).map_err(|err| io_error(&err))?;
        Ok(link.to_string_lossy().into_owned())
    }

    fn remove_directory_at(&mut self, _: Borrowed<'_, Descriptor>, _: String) -> FsResult<()> {
        READ_ONLY
    }

    fn rename_at(
        &mut self,
        _: Borrowed<'_, Descriptor>,
        _: String,
        _: Borrowed<'_, Descriptor>,
        _: String,
    ) -> FsResult<()> {
        READ_ONLY
    }

    fn symlink_at(&mut self, _: Borrowed<'_, Descriptor>, _: String, _: String) -> FsResult<()> {
        READ_ONLY
    }

    fn unlink_file_at(&mut self, _: Borrowed<'_, Descriptor>, _: String) -> FsResult<()> {
        READ_ONLY
    }

    fn is_same_object(&mut self, first: Borrowed<'_, Descriptor>, other: Borrowed<'_, Descriptor>) -> bool {
        match (metadata_of(&first), metadata_of(&other)) {
            (Ok(a), Ok(b)) => a.ino() == b.ino() && a.dev() == b.dev(),
            _ => false,
        }
    }

    fn metadata_hash(&mut self, descriptor: Borrowed<'_, Descriptor>) -> FsResult<fs::MetadataHashValue> {
        metadata_of(&descriptor).map(|metadata| hash_of(&metadata))
    }

    fn get_flags(&mut self, _: Borrowed<'_, Descriptor>) -> FsResult<fs::DescriptorFlags> {
        Ok(fs::DescriptorFlags {
            read: true,
            write: false,
            file_integrity_sync: false,
            data_integrity_sync: false,
            requested_write_sync: false,
            mutate_directory: false,
        })
    }

    fn stat_at(
        &mut self,
        descriptor: Borrowed<'_, Descriptor>,
        flags: fs::PathFlags,
        path: String,
    ) -> FsResult<fs::DescriptorStat<Datetime>> {
        metadata_at(&descriptor, &flags, &path).map(|metadata| stat_of(&metadata))
    }

    fn set_times_at(
        &mut self,
        _: Borrowed<'_, Descriptor>,
        _: fs::PathFlags,
        _: String,
        _: fs::NewTimestamp<Datetime>,
        _: fs::NewTimestamp<Datetime>,
    ) -> FsResult<()> {
        READ_ONLY
    }

    fn link_at(
        &mut self,
        _: Borrowed<'_, Descriptor>,
        _: fs::PathFlags,
        _: String,
        _: Borrowed<'_, Descriptor>,
        _: String,
    ) -> FsResult<()> {
        READ_ONLY
    }

    fn open_at(
        &mut self,
        descriptor: Borrowed<'_, Descriptor>,
        _: fs::PathFlags,
        path: String,
        open: fs::OpenFlags,
        flags: fs::DescriptorFlags,
    ) -> FsResult<Descriptor> {
        if open.create || open.truncate || open.exclusive || flags.write || flags.mutate_directory {
            return Err(fs::ErrorCode::ReadOnly);
        }
        let dir = dir_of(&descriptor)?;
        let metadata = dir.metadata(&path).map_err(|err| io_error(&err))?;
        if metadata.is_dir() {
            let opened = dir.open_dir(&path).map_err(|err| io_error(&err))?;
            return Ok(Descriptor::Dir(Arc::new(opened)));
        }
        if open.directory {
            return Err(fs::ErrorCode::NotDirectory);
        }
        let file = dir.open(&path).map_err(|err| io_error(&err))?;
        Ok(Descriptor::File(Arc::new(file.into_std())))
    }

    fn metadata_hash_at(
        &mut self,
        descriptor: Borrowed<'_, Descriptor>,
        flags: fs::PathFlags,
        path: String,
    ) -> FsResult<fs::MetadataHashValue> {
        metadata_at(&descriptor, &flags, &path).map(|metadata| hash_of(&metadata))
    }
}

impl fs::DirectoryEntryStream<Negative> for Guest {
    type T = DirectoryEntries;

    fn read_directory_entry(
        &mut self,
        entries: Borrowed<'_, DirectoryEntries>,
    ) -> FsResult<Option<fs::DirectoryEntry>> {
        Ok(lock(&entries.0).next().map(|(name, r#type)| fs::DirectoryEntry { r#type, name }))
    }
}

impl filesystem::Types<Negative, Datetime, IoError, InputStream, OutputStream> for Guest {
    fn filesystem_error_code(&mut self, _: Borrowed<'_, IoError>) -> Option<fs::ErrorCode> {
        None
    }
}

impl filesystem::Preopens<Negative, Descriptor> for Guest {
    fn get_directories(&mut self) -> Vec<(Descriptor, String)> {
        vec![(Descriptor::Dir(self.stdlib.clone()), STDLIB_GUEST_PATH.to_owned())]
    }
}
