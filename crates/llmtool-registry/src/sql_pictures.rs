//! [`RunPictures`] for [`SqlStore`], written once over `Db`: a run's pictures inserted and the
//! oldest let go in one transaction, so that two servers keeping pictures at once never keep
//! more than the limit between them for long.

use async_trait::async_trait;
use sha2::Digest as _;

use crate::db::statement;
use crate::pictures::{
    NewPicture, PictureInfo, PicturesKept, PicturesOf, RunPictures, StoredPicture,
};
use crate::sql_store::SqlStore;
use crate::store::StoreError;

/// The columns of a [`PictureInfo`], from [`FROM`].
const INFO: &str = "p.run_id, COALESCE(r.conversation, ''), COALESCE(c.owner, ''), \
                    p.position::bigint, p.format, p.width::bigint, p.height::bigint, p.size, p.sha256";

/// The pictures, with their runs and the runs' conversations.
const FROM: &str = "run_pictures p JOIN runs r ON r.id = p.run_id \
                    LEFT JOIN conversations c ON c.id = r.conversation";

type InfoRow = (i64, String, String, i64, String, i64, i64, i64, String);

/// An [`InfoRow`] and the picture's bytes.
type PictureRow = (i64, String, String, i64, String, i64, i64, i64, String, Vec<u8>);

fn info(row: InfoRow) -> PictureInfo {
    let (run, conversation, owner, position, format, width, height, bytes, sha256) = row;
    let number = |n: i64| u32::try_from(n).unwrap_or(0);
    PictureInfo {
        run,
        conversation,
        owner,
        position: number(position),
        format,
        width: number(width),
        height: number(height),
        bytes: u64::try_from(bytes).unwrap_or(0),
        sha256,
    }
}

#[async_trait]
impl RunPictures for SqlStore {
    async fn keep_pictures(
        &self,
        run: i64,
        pictures: &[NewPicture<'_>],
        most_bytes: u64,
    ) -> Result<PicturesKept, StoreError> {
        let own: u64 = pictures.iter().map(|p| p.data.len() as u64).sum();
        // Pictures over the limit on their own are not kept, and take nothing else with them.
        if pictures.is_empty() || own > most_bytes {
            return Ok(PicturesKept::default());
        }
        let mut tx = self.db.begin_write().await?;
        for (position, picture) in (1_i64..).zip(pictures) {
            let keep = statement(
                "INSERT INTO run_pictures (run_id, position, format, width, height, size, sha256, data)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            )
            .bind(run)
            .bind(position)
            .bind(picture.format)
            .bind(i64::from(picture.width))
            .bind(i64::from(picture.height))
            .bind(i64::try_from(picture.data.len()).unwrap_or(i64::MAX))
            .bind(hex::encode(sha2::Sha256::digest(picture.data)))
            .bind(picture.data);
            tx.execute(keep).await?;
        }
        // Newest first, each run's bytes added to those of the runs after it: a run whose
        // total passes the limit goes, with every older one.
        let over = statement(
            "SELECT run_id FROM (
                 SELECT run_id, SUM(SUM(size)) OVER (ORDER BY run_id DESC) AS newer
                 FROM run_pictures GROUP BY run_id) totals
             WHERE newer > $1",
        );
        let most = i64::try_from(most_bytes).unwrap_or(i64::MAX);
        let dropped: Vec<(i64,)> = tx.all(over.bind(most)).await?;
        for (old,) in &dropped {
            tx.execute(statement("DELETE FROM run_pictures WHERE run_id = $1").bind(*old)).await?;
        }
        tx.commit().await?;
        let kept_own = !dropped.iter().any(|(id,)| *id == run);
        let others = dropped.iter().filter(|(id,)| *id != run).count();
        Ok(PicturesKept {
            kept: if kept_own { u32::try_from(pictures.len()).unwrap_or(u32::MAX) } else { 0 },
            runs_dropped: others as u64,
        })
    }

    async fn pictures_of(&self, runs: PicturesOf<'_>) -> Result<Vec<PictureInfo>, StoreError> {
        let select = |runs: &str| {
            statement(format!(
                "SELECT {INFO} FROM {FROM} WHERE p.run_id IN ({runs})
                 ORDER BY p.run_id, p.position"
            ))
        };
        let list = match runs {
            PicturesOf::Conversation(id) => {
                select("SELECT r.id FROM runs r WHERE r.conversation = $1").bind(id)
            }
            PicturesOf::Runs([]) => return Ok(Vec::new()),
            // The ids are numbers the library gave: written into the statement, one per run.
            PicturesOf::Runs(ids) => {
                let ids: Vec<String> = ids.iter().map(i64::to_string).collect();
                select(&ids.join(", "))
            }
        };
        let rows: Vec<InfoRow> = self.db.all(list).await?;
        Ok(rows.into_iter().map(info).collect())
    }

    async fn picture(
        &self,
        conversation: &str,
        run: i64,
        position: u32,
    ) -> Result<Option<StoredPicture>, StoreError> {
        let one = statement(format!(
            "SELECT {INFO}, p.data FROM {FROM}
             WHERE r.conversation = $1 AND p.run_id = $2 AND p.position = $3"
        ))
        .bind(conversation)
        .bind(run)
        .bind(i64::from(position));
        let row: Option<PictureRow> = self.db.optional(one).await?;
        Ok(row.map(
            |(run, conversation, owner, position, format, width, height, bytes, sha256, data)| {
                let info = info((
                    run,
                    conversation,
                    owner,
                    position,
                    format,
                    width,
                    height,
                    bytes,
                    sha256,
                ));
                StoredPicture { info, data }
            },
        ))
    }
}
