//! [`RunPictures`]: the pictures an image tool's run made, kept with the run in the library's
//! database, for whoever may read the run's conversation. The library keeps at most as many
//! bytes of them as its server says; past that, the oldest runs' pictures go first, whole
//! (their runs stay, and each run's record still says what its pictures were).

use async_trait::async_trait;
use serde::Serialize;
use utoipa::ToSchema;

use crate::store::StoreError;

/// A picture to keep with a run, as the run received it.
#[derive(Debug, Clone, Copy)]
pub struct NewPicture<'a> {
    /// `png`, `jpeg` or `webp`: what its first bytes show (and what it is served as).
    pub format: &'a str,
    pub width: u32,
    pub height: u32,
    pub data: &'a [u8],
}

/// What is known of a kept picture, without its bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct PictureInfo {
    /// The run that made it.
    pub run: i64,
    /// The conversation the run is a turn of (`""` for none).
    pub conversation: String,
    /// Who owns that conversation, as [`crate::owner_of`] names them: who may see the
    /// picture, besides admins.
    pub owner: String,
    /// 1 for the run's first picture, then 2, 3, ...
    pub position: u32,
    /// `png`, `jpeg` or `webp`.
    pub format: String,
    pub width: u32,
    pub height: u32,
    /// Its length in bytes.
    pub bytes: u64,
    pub sha256: String,
}

/// A kept picture, with its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredPicture {
    pub info: PictureInfo,
    pub data: Vec<u8>,
}

/// Whose pictures [`RunPictures::pictures_of`] tells of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PicturesOf<'a> {
    /// The runs of a conversation.
    Conversation(&'a str),
    /// These runs (a page of [`crate::Store::runs`]).
    Runs(&'a [i64]),
}

/// What keeping a run's pictures did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PicturesKept {
    /// The pictures kept with the run: none when they alone are over the limit (and then no
    /// older run's pictures went).
    pub kept: u32,
    /// The older runs whose pictures went to make room.
    pub runs_dropped: u64,
}

/// The pictures kept with runs.
#[async_trait]
pub trait RunPictures {
    /// Keeps `pictures` with the run `run` (numbered from 1 in their order), then lets the
    /// oldest runs' pictures go, each run's all together, until at most `most_bytes` bytes of
    /// pictures are kept. Pictures over `most_bytes` on their own are not kept, and nothing
    /// else goes for them.
    async fn keep_pictures(
        &self,
        run: i64,
        pictures: &[NewPicture<'_>],
        most_bytes: u64,
    ) -> Result<PicturesKept, StoreError>;

    /// What is kept of the pictures of `runs`, by run and position.
    async fn pictures_of(&self, runs: PicturesOf<'_>) -> Result<Vec<PictureInfo>, StoreError>;

    /// The picture at `position` of the run `run`, a turn of the conversation `conversation`;
    /// `None` when there is none, or it is no longer kept.
    async fn picture(
        &self,
        conversation: &str,
        run: i64,
        position: u32,
    ) -> Result<Option<StoredPicture>, StoreError>;
}
