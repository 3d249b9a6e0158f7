"""The Hugging Face Hub as a model source (core.catalog.model_source's port), through huggingface_hub."""
