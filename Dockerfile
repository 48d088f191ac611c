# Serves a folder written by `explorer publish NAME DIR`: build the image from that folder
#   (cd DIR && docker build -t my-explorer . && docker run -p 8501:8501 my-explorer)
# Viewer only: the folder's requirements.txt has no model packages, so the image is small.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    EXPLORER_CACHE_DIR=/app/cache

RUN useradd --create-home --uid 10001 explorer
WORKDIR /app
COPY requirements.txt .
RUN pip install -r requirements.txt
COPY --chown=explorer:explorer . .
USER explorer

EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4).status != 200)"]
CMD ["streamlit", "run", "app.py", "--server.address=0.0.0.0", "--server.port=8501"]
