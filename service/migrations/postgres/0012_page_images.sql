-- Each indexed page's displayed image, sized and encoded (JPEG) for a vision-model marker, kept
-- from indexing so that marking a question sends pages without rendering them again. Empty when
-- the configured marker takes no images, or for pages indexed before this column.
ALTER TABLE asset_pages ADD COLUMN image BYTEA;
