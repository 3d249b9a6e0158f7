"""Pasted tool output -> runs. Every fixture is real output copied verbatim from a GitHub issue or
pull request (source above each one); only the vLLM benchmark_latency sample is built from the
script's print format, since no real paste of it was found."""

from __future__ import annotations

import pytest

from core.catalog.loader import default_catalog
from core.community.pasted import (
    BATCHED,
    LATENCY_INCLUDES_PREFILL,
    MODEL_FROM_ARCH,
    PARTIAL_OFFLOAD,
    QUANT_ASSUMED,
    THROUGHPUT_ONLY,
    Pasted,
    ftype_quant,
    quant_in_name,
    read_pasted,
    strip_quant,
)

CATALOG = default_catalog()

# ggml-org/llama.cpp PR #4766 (ggerganov, 2024-01-10): old "pp 512" / "tg 128" test names.
BENCH_4090 = """\
ggml_init_cublas: GGML_CUDA_FORCE_MMQ:   no
ggml_init_cublas: CUDA_USE_TENSOR_CORES: yes
ggml_init_cublas: found 1 CUDA devices:
  Device 0: NVIDIA GeForce RTX 4090, compute capability 8.9, VMM: yes
| model                          |       size |     params | backend    | ngl | test       |              t/s |
| ------------------------------ | ---------: | ---------: | ---------- | --: | ---------- | ---------------: |
| llama 7B F16                   |  12.55 GiB |     6.74 B | CUDA       |  99 | pp 512     | 11048.22 ± 269.74 |
| llama 7B F16                   |  12.55 GiB |     6.74 B | CUDA       |  99 | tg 128     |     61.03 ± 0.07 |
| llama 7B Q8_0                  |   6.67 GiB |     6.74 B | CUDA       |  99 | pp 512     | 7664.00 ± 108.83 |
| llama 7B Q8_0                  |   6.67 GiB |     6.74 B | CUDA       |  99 | tg 128     |     98.13 ± 0.07 |
"""  # noqa: E501

# ggml-org/llama.cpp PR #4812 (slaren, 2024-01-07): an extra setting column (nkvo).
BENCH_NKVO = """\
  Device 0: NVIDIA GeForce RTX 3090 Ti, compute capability 8.6, VMM: yes
| model                          |       size |     params | backend    | ngl |          nkvo | test       |              t/s |
| ------------------------------ | ---------: | ---------: | ---------- | --: | ------------: | ---------- | ---------------: |
| llama 7B Q4_0                  |   3.56 GiB |     6.74 B | CUDA       |  99 |             0 | pp 512     | 4035.47 ± 157.68 |
| llama 7B Q4_0                  |   3.56 GiB |     6.74 B | CUDA       |  99 |             0 | tg 128     |    127.43 ± 0.18 |
| llama 7B Q4_0                  |   3.56 GiB |     6.74 B | CUDA       |  99 |             1 | pp 512     |   237.84 ± 10.28 |
| llama 7B Q4_0                  |   3.56 GiB |     6.74 B | CUDA       |  99 |             1 | tg 128     |     59.99 ± 2.35 |

build: 32d9f7d9 (1786)
"""  # noqa: E501

# geerlingguy/ai-benchmarks issue #43 (2025-12-09): pp4096 and the mixed pp4096+tg128 test.
BENCH_GEERLING = """\
build: 086a63e3a (7340)

| model                          |       size |     params | backend    | ngl |            test |                  t/s |
| ------------------------------ | ---------: | ---------: | ---------- | --: | --------------: | -------------------: |
| llama 1B Q4_K - Medium         | 636.18 MiB |     1.10 B | Vulkan     |  99 |           pp512 |   10802.35 ± 9881.63 |
| llama 1B Q4_K - Medium         | 636.18 MiB |     1.10 B | Vulkan     |  99 |          pp4096 |     18709.17 ± 59.99 |
| llama 1B Q4_K - Medium         | 636.18 MiB |     1.10 B | Vulkan     |  99 |           tg128 |        762.37 ± 4.41 |
| llama 1B Q4_K - Medium         | 636.18 MiB |     1.10 B | Vulkan     |  99 |    pp4096+tg128 |      9752.17 ± 68.03 |
"""  # noqa: E501

# A public benchmark note (ROCm, llama-bench -d): the "@ dN" depth form, MoE size "30B.A3B".
BENCH_DEPTH = """\
| model                          |       size |     params | backend    | ngl | mmap |            test |                  t/s |
| ------------------------------ | ---------: | ---------: | ---------- | --: | ---: | --------------: | -------------------: |
| qwen3moe 30B.A3B Q4_K - Medium |  17.28 GiB |    30.53 B | ROCm       |  -1 |    0 |           pp512 |      1205.15 ± 16.53 |
| qwen3moe 30B.A3B Q4_K - Medium |  17.28 GiB |    30.53 B | ROCm       |  -1 |    0 |           tg128 |         71.58 ± 0.24 |
| qwen3moe 30B.A3B Q4_K - Medium |  17.28 GiB |    30.53 B | ROCm       |  -1 |    0 |   pp512 @ d4096 |       912.27 ± 13.24 |
| qwen3moe 30B.A3B Q4_K - Medium |  17.28 GiB |    30.53 B | ROCm       |  -1 |    0 |   tg128 @ d4096 |         62.85 ± 0.28 |
| qwen3moe 30B.A3B Q4_K - Medium |  17.28 GiB |    30.53 B | ROCm       |  -1 |    0 |   pp512 @ d8192 |       752.09 ± 11.60 |
| qwen3moe 30B.A3B Q4_K - Medium |  17.28 GiB |    30.53 B | ROCm       |  -1 |    0 |   tg128 @ d8192 |         56.40 ± 0.17 |
| qwen3moe 30B.A3B Q4_K - Medium |  17.28 GiB |    30.53 B | ROCm       |  -1 |    0 |  pp512 @ d16384 |        528.11 ± 9.05 |
| qwen3moe 30B.A3B Q4_K - Medium |  17.28 GiB |    30.53 B | ROCm       |  -1 |    0 |  tg128 @ d16384 |         46.81 ± 0.13 |
| qwen3moe 30B.A3B Q4_K - Medium |  17.28 GiB |    30.53 B | ROCm       |  -1 |    0 |  pp512 @ d32768 |        323.68 ± 8.30 |
| qwen3moe 30B.A3B Q4_K - Medium |  17.28 GiB |    30.53 B | ROCm       |  -1 |    0 |  tg128 @ d32768 |         35.32 ± 0.05 |

build: 067de93 (200)
"""  # noqa: E501

# Same source family: quantized KV cache columns (type_k/type_v) and flash attention on.
BENCH_TYPE_K = """\
| model                          |       size |     params | backend    | ngl | type_k | type_v |  fa |            test |                  t/s |
| ------------------------------ | ---------: | ---------: | ---------- | --: | -----: | -----: | --: | --------------: | -------------------: |
| qwen3moe 30B.A3B Q4_K - Medium |  17.28 GiB |    30.53 B | Vulkan     |  -1 |   q8_0 |   q8_0 |   1 |   pp512 @ d4096 |       667.65 ± 10.12 |
| qwen3moe 30B.A3B Q4_K - Medium |  17.28 GiB |    30.53 B | Vulkan     |  -1 |   q8_0 |   q8_0 |   1 |   tg128 @ d4096 |         76.38 ± 0.17 |

build: 067de93 (200)
"""  # noqa: E501

# ggml-org/llama.cpp issue #9013 (sivansh11, 2025-05-25): llama-cli's timing block.
LLAMA_CLI = """\
llama_perf_sampler_print:    sampling time =      24.62 ms /   227 runs   (    0.11 ms per token,  9220.90 tokens per second)
llama_perf_context_print:        load time =     618.92 ms
llama_perf_context_print: prompt eval time =     927.17 ms /    49 tokens (   18.92 ms per token,    52.85 tokens per second)
llama_perf_context_print:        eval time =   14085.85 ms /   178 runs   (   79.13 ms per token,    12.64 tokens per second)
llama_perf_context_print:       total time =   20699.49 ms /   227 tokens
"""  # noqa: E501

# Same comment: llama-server's per-request block.
LLAMA_SERVER = """\
slot launch_slot_: id  0 | task 0 | processing task
slot update_slots: id  0 | task 0 | new prompt, n_ctx_slot = 4096, n_keep = 0, n_prompt_tokens = 51
slot update_slots: id  0 | task 0 | kv cache rm [0, end)
slot update_slots: id  0 | task 0 | prompt processing progress, n_past = 51, n_tokens = 51, progress = 1.000000
slot update_slots: id  0 | task 0 | prompt done, n_past = 51, n_tokens = 51
slot      release: id  0 | task 0 | stop processing: n_past = 325, truncated = 0
slot print_timing: id  0 | task 0 |
prompt eval time =     915.13 ms /    51 tokens (   17.94 ms per token,    55.73 tokens per second)
       eval time =   23038.87 ms /   275 tokens (   83.78 ms per token,    11.94 tokens per second)
"""  # noqa: E501

# ggml-org/llama.cpp issue #2237 (2023-07-16): the old llama_print_timings names.
LLAMA_PRINT_TIMINGS = """\
llama_print_timings:        load time =   907.71 ms
llama_print_timings:      sample time =   301.80 ms /   512 runs   (    0.59 ms per token,  1696.48 tokens per second)
llama_print_timings: prompt eval time =  6294.68 ms /   271 tokens (   23.23 ms per token,    43.05 tokens per second)
llama_print_timings:        eval time = 115222.19 ms /   510 runs   (  225.93 ms per token,     4.43 tokens per second)
"""  # noqa: E501

# A public llama-server log: four cards named by "using device CUDAn", the model file on the command.
LLAMA_SERVER_4X3090 = """\
llama-server --model models/DeepSeek-R1-Distill-Qwen-32B-Q4_K_M.gguf --port 8888 --ctx-size 8192 --n-gpu-layers -1

            load_model: loading model 'models/DeepSeek-R1-Distill-Qwen-32B-Q4_K_M.gguf'
            llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 3090) - 23982 MiB free
            llama_model_load_from_file_impl: using device CUDA1 (NVIDIA GeForce RTX 3090) - 23982 MiB free
            llama_model_load_from_file_impl: using device CUDA2 (NVIDIA GeForce RTX 3090) - 23982 MiB free
            llama_model_load_from_file_impl: using device CUDA3 (NVIDIA GeForce RTX 3090) - 23923 MiB free

            print_info: file format = GGUF V3 (latest)
            print_info: file type   = Q4_K - Medium
            print_info: file size   = 18.48 GiB (4.85 BPW)
                    print_info: arch             = qwen2
            print_info: vocab_only       = 0
            print_info: n_ctx_train      = 131072
            print_info: n_embd           = 5120
            print_info: n_layer          = 64

            load_tensors: offloading 0 repeating layers to GPU
            load_tensors: offloaded 0/65 layers to GPU
            load_tensors:   CPU_Mapped model buffer size = 18926.01 MiB
"""  # noqa: E501
# (The log stops before timings; the timing block below is llama.cpp's format from issue #9013.)
LLAMA_SERVER_4X3090_TIMINGS = LLAMA_SERVER_4X3090 + LLAMA_SERVER.split("slot print_timing", 1)[1]

# ollama/ollama issue #1806 (nejib1, 2024-01-06).
OLLAMA_MISTRAL = """\
ollama run mistral --verbose
>>> hello
 Hello! How can I help you today? Is there a specific question or topic you'd like to discuss? I'm here
to provide information and answer any queries you may have. Let me know if there's something on your
mind, and I'll do my best to assist you. If you don't have a particular question, feel free to ask me
about anything that interests you, or just share some conversation starters if you'd like! I'm here to
make this interaction enjoyable and informative for you. So, what would you like to talk about?

total duration:       5.088275983s
load duration:        1.365523ms
prompt eval count:    11 token(s)
prompt eval duration: 204.563ms
prompt eval rate:     53.77 tokens/s
eval count:           120 token(s)
eval duration:        4.876787s
eval rate:            24.61 tokens/s
"""

# ollama/ollama PR #2163 (dhiltgen, 2024-01-23): library and GPU layer lines.
OLLAMA_METAL = """\
./ollama run orca-mini
>>> /set verbose
Set 'verbose' mode.
>>> hello
 Hello, how can I assist you today?

total duration:       835.322625ms
load duration:        452.875µs
prompt eval count:    42 token(s)
prompt eval duration: 593.785ms
prompt eval rate:     70.73 tokens/s
eval count:           10 token(s)
eval duration:        240.374ms
eval rate:            41.60 tokens/s
llm library:          metal
GPU loaded layers:    1/27
>>>
"""

# vllm-project/vllm PR #18566 (mgoin, 2025-05-22): concurrency not limited (1000 prompts at once).
VLLM_SERVE_LOADED = """\
vllm serve meta-llama/Llama-3.1-8B-Instruct --disable-log-requests

vllm bench serve --model meta-llama/Llama-3.1-8B-Instruct --endpoint-type openai-chat --endpoint /v1/chat/completions --dataset-name hf --dataset-path Aeala/ShareGPT_Vicuna_unfiltered
============ Serving Benchmark Result ============
Successful requests:                     1000      
Benchmark duration (s):                  30.85     
Total input tokens:                      229711    
Total generated tokens:                  203068    
Request throughput (req/s):              32.42     
Output token throughput (tok/s):         6582.87   
Total Token throughput (tok/s):          14029.44  
---------------Time to First Token----------------
Mean TTFT (ms):                          9626.13   
Median TTFT (ms):                        9459.70   
P99 TTFT (ms):                           12666.73  
-----Time per Output Token (excl. 1st token)------
Mean TPOT (ms):                          77.86     
Median TPOT (ms):                        48.84     
P99 TPOT (ms):                           211.21    
---------------Inter-token Latency----------------
Mean ITL (ms):                           38.13     
Median ITL (ms):                         25.44     
P99 ITL (ms):                            214.35    
==================================================
"""  # noqa: E501, W291

# A public README (vLLM on gfx906 / MI50): one request at a time, so TPOT is the single-user speed.
VLLM_SERVE_SINGLE = """\
$ amd-smi set --power-cap 190
$ vllm bench serve --model gaunernst/gemma-3-27b-it-qat-autoawq --host 127.0.0.1 --num-prompts 10 --max-concurrency 1 --dataset-name random --random-input-len 6144 --random-output-len 16
============ Serving Benchmark Result ============
Successful requests:                     10
Maximum request concurrency:             1
Benchmark duration (s):                  148.72
Total input tokens:                      61430
Total generated tokens:                  104
Request throughput (req/s):              0.07
Output token throughput (tok/s):         0.70
Total Token throughput (tok/s):          413.75
---------------Time to First Token----------------
Mean TTFT (ms):                          14391.39
Median TTFT (ms):                        16005.28
P99 TTFT (ms):                           16044.94
-----Time per Output Token (excl. 1st token)------
Mean TPOT (ms):                          51.44
Median TPOT (ms):                        51.31
P99 TPOT (ms):                           52.42
---------------Inter-token Latency----------------
Mean ITL (ms):                           51.09
Median ITL (ms):                         50.92
P99 ITL (ms):                            52.98
==================================
"""  # noqa: E501

# vllm-project/vllm PR #8914 (mgoin, 2024-09-27): benchmark_throughput.py's summary.
VLLM_THROUGHPUT = "Throughput: 89.27 requests/s, 22853.37 total tokens/s, 11426.69 output tokens/s\n"

# Built from benchmarks/benchmark_latency.py's prints (no real paste found): Namespace + average.
VLLM_LATENCY = """\
Namespace(model='meta-llama/Llama-2-7b-hf', tokenizer=None, quantization=None, tensor_parallel_size=1, input_len=32, output_len=128, batch_size=1, n=1, use_beam_search=False, num_iters=3, trust_remote_code=False, dtype='auto')
Avg latency: 1.6212 seconds
"""  # noqa: E501


def _one(text: str) -> Pasted:
    pasted = read_pasted(text, CATALOG)
    assert pasted is not None
    return pasted


def test_llama_bench_old_test_names_pair_tg_and_pp_per_model() -> None:
    p = _one(BENCH_4090)
    assert (p.framework, p.gpu, p.gpu_count) == ("llama.cpp", "NVIDIA GeForce RTX 4090", 1)
    assert [(r.quant, r.decode_tps, r.prefill_tps, r.prompt_tokens) for r in p.runs] == [
        ("F16", 61.03, 11048.22, 512),
        ("Q8_0", 98.13, 7664.0, 512),
    ]
    run = p.runs[0]
    assert (run.model, run.params_b, run.backend) == ("llama 7B", 6.74, "CUDA")
    assert (run.n_gpu_layers, run.depth) == (99, 0)
    assert MODEL_FROM_ARCH in run.caveats
    # The device lines belong to the paste: the user's own words end before them.
    assert BENCH_4090[: p.start].strip() == ""


def test_llama_bench_rows_differing_in_a_setting_are_separate_runs() -> None:
    p = _one(BENCH_NKVO)
    assert [(r.decode_tps, r.prefill_tps) for r in p.runs] == [(127.43, 4035.47), (59.99, 237.84)]
    assert p.gpu == "NVIDIA GeForce RTX 3090 Ti"
    assert p.version == "b1786"


def test_llama_bench_first_pp_is_paired_and_mixed_tests_ignored() -> None:
    p = _one(BENCH_GEERLING)
    assert len(p.runs) == 1
    run = p.runs[0]
    assert (run.decode_tps, run.prefill_tps, run.prompt_tokens) == (762.37, 10802.35, 512)
    assert (run.quant, run.model, run.backend) == ("Q4_K_M", "llama 1B", "Vulkan")
    assert p.gpu is None and p.version == "b7340"


def test_llama_bench_depth_form_gives_one_run_per_depth() -> None:
    p = _one(BENCH_DEPTH)
    assert [(r.depth, r.decode_tps, r.prefill_tps) for r in p.runs] == [
        (0, 71.58, 1205.15),
        (4096, 62.85, 912.27),
        (8192, 56.40, 752.09),
        (16384, 46.81, 528.11),
        (32768, 35.32, 323.68),
    ]
    assert p.runs[0].model == "qwen3moe 30B A3B"  # MoE size split so the resolver reads "a3b"
    assert p.runs[0].quant == "Q4_K_M"
    assert p.runs[0].n_gpu_layers == -1


def test_llama_bench_kv_type_and_flash_attention_columns() -> None:
    (run,) = _one(BENCH_TYPE_K).runs
    assert (run.kv_type, run.flash_attn, run.depth, run.decode_tps) == ("q8_0", True, 4096, 76.38)


def test_llama_cli_timings() -> None:
    (run,) = _one(LLAMA_CLI).runs
    assert run.tool == "llama.cpp"
    assert run.decode_tps == pytest.approx(12.64, abs=0.01)
    assert run.prefill_tps == pytest.approx(52.85, abs=0.01)
    assert run.prompt_tokens == 49
    assert run.depth == 49 + 178 // 2  # the prompt plus half of what was generated


def test_llama_server_timings_and_slot_context() -> None:
    p = _one(LLAMA_SERVER)
    (run,) = p.runs
    assert run.decode_tps == pytest.approx(11.94, abs=0.01)
    assert run.prefill_tps == pytest.approx(55.73, abs=0.01)
    assert run.context == 4096


def test_old_llama_print_timings() -> None:
    (run,) = _one(LLAMA_PRINT_TIMINGS).runs
    assert run.decode_tps == pytest.approx(4.43, abs=0.01)
    assert run.prefill_tps == pytest.approx(43.05, abs=0.01)


def test_server_log_counts_devices_and_reads_the_model_file() -> None:
    p = _one(LLAMA_SERVER_4X3090_TIMINGS)
    assert (p.gpu, p.gpu_count) == ("NVIDIA GeForce RTX 3090", 4)
    (run,) = p.runs
    assert run.quant == "Q4_K_M"
    assert run.model == "DeepSeek-R1-Distill-Qwen-32B"
    assert PARTIAL_OFFLOAD in run.caveats  # "offloaded 0/65 layers to GPU"


def test_ollama_verbose() -> None:
    p = _one(OLLAMA_MISTRAL)
    (run,) = p.runs
    assert p.framework == "ollama"
    assert run.decode_tps == 24.61
    # 11 prompt tokens say nothing about prefill speed (below min_prefill_tokens): not kept.
    assert run.prefill_tps is None
    assert run.model == "mistral"
    assert run.quant == "Q4_K_M" and QUANT_ASSUMED in run.caveats
    assert run.depth == 11 + 120 // 2


def test_ollama_library_and_partial_gpu_layers() -> None:
    (run,) = _one(OLLAMA_METAL).runs
    assert (run.decode_tps, run.prefill_tps, run.prompt_tokens) == (41.60, 70.73, 42)
    assert run.backend == "metal"
    assert PARTIAL_OFFLOAD in run.caveats


def test_ollama_tag_quant_is_read_from_the_tag() -> None:
    (run,) = _one("ollama run qwen2.5:7b-instruct-q8_0 --verbose\n" + OLLAMA_MISTRAL.split("\n", 1)[1]).runs
    assert (run.model, run.quant) == ("qwen2.5 7b", "Q8_0")
    assert QUANT_ASSUMED not in run.caveats


def test_vllm_serve_single_user_decode_is_1000_over_tpot() -> None:
    p = _one(VLLM_SERVE_SINGLE)
    (run,) = p.runs
    assert p.framework == "vllm"
    assert run.decode_tps == pytest.approx(1000 / 51.44, abs=0.01)
    # One request at a time: prefill = the mean prompt over the mean TTFT.
    assert run.prompt_tokens == 6143
    assert run.prefill_tps == pytest.approx(6143 / 14.39139, rel=1e-3)
    assert run.model == "gaunernst/gemma-3-27b-it-qat-autoawq" and run.quant == "AWQ"
    assert BATCHED not in run.caveats


def test_vllm_serve_under_load_is_flagged_batched_and_has_no_prefill() -> None:
    (run,) = _one(VLLM_SERVE_LOADED).runs
    assert run.decode_tps == pytest.approx(1000 / 77.86, abs=0.01)  # not the 6582 aggregate
    assert BATCHED in run.caveats
    assert run.prefill_tps is None
    assert run.model == "meta-llama/Llama-3.1-8B-Instruct"


def test_vllm_throughput_has_no_decode() -> None:
    (run,) = _one(VLLM_THROUGHPUT).runs
    assert run.decode_tps is None and THROUGHPUT_ONLY in run.caveats


def test_vllm_latency_decode_from_output_len() -> None:
    (run,) = _one(VLLM_LATENCY).runs
    assert run.decode_tps == pytest.approx(128 / 1.6212, abs=0.01)
    assert LATENCY_INCLUDES_PREFILL in run.caveats
    assert run.model == "meta-llama/Llama-2-7b-hf"


@pytest.mark.parametrize(
    "text",
    ["", "hello", "| a | b |\n|---|---|\n| 1 | 2 |", "eval rate: fast", "gpu=4090 decode=12", "x" * 5000],
)
def test_nothing_pasted(text: str) -> None:
    assert read_pasted(text, CATALOG) is None


@pytest.mark.parametrize(
    ("name", "quant"),
    [
        ("Q4_K - Medium", "Q4_K_M"),
        ("(guessed) Q8_0", "Q8_0"),
        ("IQ3_S mix - 3.66 bpw", "IQ3_M"),
        ("Q2_K - Medium", "Q2_K"),
        ("MXFP4 MoE", "MXFP4"),
        ("all F32", "F32"),
        ("Q9_Z - Fancy", None),
    ],
)
def test_llama_ftype_names(name: str, quant: str | None) -> None:
    assert ftype_quant(name, CATALOG) == quant


def test_quant_in_file_names() -> None:
    assert quant_in_name("Qwen3-8B-Q4_K_M.gguf") == "Q4_K_M"
    assert quant_in_name("gemma-3-27b-it-UD-Q4_K_XL.gguf") == "UD-Q4_K_XL"
    assert quant_in_name("model.gguf") is None
    assert strip_quant("models/DeepSeek-R1-Distill-Qwen-32B-Q4_K_M.gguf") == "DeepSeek-R1-Distill-Qwen-32B"


# --- hostile shapes: linear time ------------------------------------------------------------------

HOSTILE_60KB = {
    "blank lines": "\n" * 60_000,
    "spaces then newline": " \n" * 30_000,
    "tabs and CR": "\t\r\n" * 20_000,
    "= run": "=" * 60_000,
    "= run then a title": "=" * 60_000 + " Serving Benchmark Result",
    "blank lines after a title": "=== Serving Benchmark Result ===" + "\n" * 60_000,
    "blank lines after eval time": "eval time" + "\n" * 60_000,
    "vulkan line of spaces": "ggml_vulkan: 0 = " + " " * 60_000,
    "file type of spaces": "file type = x" + " " * 60_000 + "y",
}


@pytest.mark.parametrize("name", list(HOSTILE_60KB))
def test_hostile_60kb_reads_in_linear_time(name: str) -> None:
    import time

    text = HOSTILE_60KB[name]
    start = time.perf_counter()
    read_pasted(text, CATALOG)
    # A hang guard, not a speed figure: quadratic patterns took 20-50 s on these, linear ones take
    # ~25 ms (400 times under the guard, so a busy machine can't fail it). The ms per KB of each
    # shape is scripts/bench_parse.py's figure (--max-ms-per-kb gates it).
    assert time.perf_counter() - start < 10.0


def test_windows_line_ends_read_the_same() -> None:
    for sample in (VLLM_SERVE_SINGLE, OLLAMA_MISTRAL, BENCH_4090, LLAMA_SERVER_4X3090_TIMINGS):
        crlf, lf = _one(sample.replace("\n", "\r\n")), _one(sample)
        assert crlf.runs == lf.runs
        assert (crlf.gpu, crlf.gpu_count, crlf.version) == (lf.gpu, lf.gpu_count, lf.version)


def test_serving_header_after_a_long_rule_starts_the_paste_at_the_rule() -> None:
    p = _one("my numbers:\n" + VLLM_SERVE_SINGLE)
    assert p.start <= len("my numbers:\n") + VLLM_SERVE_SINGLE.index("=")
