-- A member's stable id, made when the member is added: conversations name their owner by it
-- (`member:ID`), so that a member removed and added again, or made again at a single sign-on,
-- is someone new and reads none of what the removed one owned (an admin still does). The
-- conversations of members who are still here move to their ids; those of members already
-- removed keep `member:E-MAIL`, which no caller is any more.
ALTER TABLE members ADD COLUMN id TEXT;
UPDATE members SET id = lower(hex(randomblob(16)));
CREATE UNIQUE INDEX members_by_id ON members (id);
UPDATE conversations
   SET owner = 'member:' || (SELECT m.id FROM members m WHERE 'member:' || m.email = conversations.owner)
 WHERE EXISTS (SELECT 1 FROM members m WHERE 'member:' || m.email = conversations.owner);
