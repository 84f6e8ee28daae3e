"""Strings of Streamlit's own file-uploader text, shown in Chinese by ui.uploader (the English ones are
Streamlit's, repeated here only so that both languages have the same keys)."""

EN = {"upload.button": "Upload", "upload.limit": "{mb}MB per file", "upload.drag": "Drag and drop a file here"}
ZH = {"upload.button": "上传", "upload.limit": "单个文件上限 {mb} MB", "upload.drag": "将文件拖放到此处"}
