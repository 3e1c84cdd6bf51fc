# The image of every Ray node that runs Troupe ranks (deploy/kuberay; optional for deploy/slurm, which can use a
# venv on shared storage instead): Ray plus the runtime with its gpu and cluster extras, the same on head and
# workers. Build from the repo root and push where the cluster pulls from:
#   docker build -f deploy/ray.Dockerfile -t <registry>/troupe-ray:latest . && docker push <registry>/troupe-ray:latest
# Keep the Ray version equal to `rayVersion` in deploy/kuberay/*.yaml.
FROM rayproject/ray:2.40.0-py311-gpu
WORKDIR /opt/troupe
COPY --chown=ray:users gpu-runtime ./gpu-runtime
COPY --chown=ray:users kernels ./kernels
RUN pip install --no-cache-dir torch && pip install --no-cache-dir -e kernels -e "gpu-runtime[gpu,grpc,cluster]"
