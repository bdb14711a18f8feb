//! `wasi:filesystem`: the standard library, read-only at `/python`, the only preopen. Every
//! path is opened beneath the standard library's directory with cap-std, so `..`, absolute
//! paths and symlinks cannot leave it.

use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use cap_fs_ext::MetadataExt as _;
use cap_std::fs::Metadata;
use hyperlight_common::resource::BorrowedResourceGuard;

use super::super::bindings::r#wasi::r#clocks::r#wall_clock::Datetime;
use super::super::bindings::r#wasi::r#filesystem::{self as filesystem, r#types as fs};
use super::super::resources::{Descriptor, DirectoryEntries, InputStream, IoError, OutputStream};
use super::super::state::Guest;
use super::io::MAX_READ;
use crate::guest::manifest::STDLIB_GUEST_PATH;
use crate::platform;
use crate::sandbox::live::lock;

type Borrowed<'a, T> = BorrowedResourceGuard<'a, T>;
type Negative = hyperlight_common::component::Negative;
type FsResult<T> = Result<T, fs::ErrorCode>;

fn io_error(err: &std::io::Error) -> fs::ErrorCode {
    use std::io::ErrorKind as Kind;
    match err.kind() {
        Kind::NotFound => fs::ErrorCode::NoEntry,
        Kind::PermissionDenied => fs::ErrorCode::NotPermitted,
        Kind::AlreadyExists => fs::ErrorCode::Exist,
        Kind::NotADirectory => fs::ErrorCode::NotDirectory,
        Kind::IsADirectory => fs::ErrorCode::IsDirectory,
        Kind::InvalidInput | Kind::InvalidFilename => fs::ErrorCode::Invalid,
        _ if platform::is_link_loop(err) => fs::ErrorCode::Loop,
        _ => fs::ErrorCode::Access,
    }
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
        let read = platform::read_at(file, &mut bytes, offset).map_err(|err| io_error(&err))?;
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
