#!/bin/sh
# `lightmetal compile` as a user drives it: help, --info, a compile whose
# binary `lightmetal run` takes .npy files of the model's element types,
# and precise one-line errors for bad flags and bad models.
#   test_compile_cli.sh LIGHTMETAL WORKDIR TESTDATA
# TESTDATA is ONNX's backend test data (node/test_*); the script skips when
# it is absent.
LM=$1
W=$2
D=$3/node
rm -rf "$W" && mkdir -p "$W" || exit 1
. "$(dirname "$0")/../tools/check_lib.sh"

expect_ok help "usage: lightmetal compile MODEL.onnx -o FILE.lmb" compile --help
for words in --input-shape --dim --sequence --absent --const --golden --dtype --trace --trace-region --seed-input --pad-dynamic --graph-outputs --info "exit codes"; do
    expect_ok "help_mentions_$words" "$words" compile --help
done
expect_ok listed "compile an ONNX model into a binary" --help
lm compile --list-ops
if [ "$rc" -eq 0 ] && grep -qx Conv "$W/out" && grep -qx Softmax "$W/out" && [ "$(wc -l <"$W/out")" -ge 100 ]; then
    pass list_ops
else
    fail list_ops "exit $rc, $(wc -l <"$W/out") ops"
fi

if [ ! -f "$D/test_add/model.onnx" ]; then
    echo "SKIP: no ONNX test data at $3"
    check_summary
    exit $?
fi

expect_ok info "input  x                    float[3, 4, 5]" compile "$D/test_add/model.onnx" --info
expect_ok info_needs_value "(decides shapes: give it with --const)" \
    compile "$D/test_reshape_reordered_all_dims/model.onnx" --info
# A sequence input: its length when compiling, its tensors as NAME[i].
S="$D/test_sequence_insert_at_back/model.onnx"
expect_ok info_sequence "input  sequence             sequence of int64[...]  (give its length with --sequence)" \
    compile "$S" --info
expect_error sequence_needs_length 2 "graph input 'sequence' is a sequence: give its length with --sequence sequence=N" \
    compile "$S" -o "$W/s.lmb"
expect_error sequence_bad_length 2 "--sequence: '4097' is not an integer in [0, 4096]" \
    compile "$S" -o "$W/s.lmb" --sequence sequence=4097
expect_ok sequence_compile "SequenceInsert                1  folded" \
    compile "$S" -o "$W/s.lmb" --sequence sequence=2 --input-shape "sequence[0]=3" \
    --input-shape "sequence[1]=2" --input-shape tensor=3
expect_ok sequence_names "output_sequence[2] Output              12 bytes  Int64 stored as Int32, shape (3,)" \
    info "$W/s.lmb"
O="$D/test_optional_has_element/model.onnx"
expect_ok info_optional "optional float[4]  (present unless --absent)" compile "$O" --info
expect_ok optional_absent "OptionalHasElement            1  folded" \
    compile "$O" -o "$W/o.lmb" --absent optional_input
expect_error absent_not_optional 2 "absent input: graph input 'x' is not optional" \
    compile "$D/test_add/model.onnx" -o "$W/x.lmb" --absent x
# --graph-outputs: compiled up to values inside the model, which become the
# binary's outputs.
X="$D/test_softmax_axis_0_expanded/model.onnx"
E=Softmax_test_softmax_axis_0_expanded_function_X_Exp
expect_ok graph_outputs_info "output $E (type inferred when compiling)" \
    compile "$X" --info --graph-outputs "$E"
expect_ok graph_outputs_compile "Exp                           1  device" \
    compile "$X" -o "$W/cut.lmb" --graph-outputs "$E"
expect_ok graph_outputs_binary "$E Output" info "$W/cut.lmb"
expect_error graph_outputs_unknown 2 "output 'nope': the model has no value of that name" \
    compile "$X" -o "$W/cut.lmb" --graph-outputs "$E,nope"
expect_error graph_outputs_empty 2 "--graph-outputs: '$E,' has an empty name" \
    compile "$X" -o "$W/cut.lmb" --graph-outputs "$E,"
expect_ok compile "1 nodes, 1 on the device" compile "$D/test_add/model.onnx" -o "$W/add.lmb"
expect_ok summary_row "Add" compile "$D/test_add/model.onnx" -o "$W/add.lmb"
expect_ok verify "ok" verify "$W/add.lmb"
# Where the time goes: the compile's device time per op, and a replay's by
# node label (its first word the op).
expect_ok summary_device_time "host time device time" compile "$D/test_add/model.onnx" -o "$W/add.lmb"
expect_ok info_labels "launch labels:  4 of 4 EnqueuePrograms" info "$W/add.lmb"
expect_ok info_labels_json '"labelled_launches": 4' info --json "$W/add.lmb"
expect_ok run_profile_label "  Add #0" run "$W/add.lmb" --profile
expect_ok run_profile_by_op "by op (a label's first word):" run "$W/add.lmb" --profile
expect_ok run_profile_json '"label": "Add #0"' run "$W/add.lmb" --profile --json
# Inside a label, by program (its kernels' names).
expect_ok run_profile_by_program "1  binary_reader.c + binary_compute.c + tile_writer.c" \
    run "$W/add.lmb" --profile
expect_ok run_profile_programs_json \
    '"program": "binary_reader.c + binary_compute.c + tile_writer.c"' \
    run "$W/add.lmb" --profile --json
expect_ok run_profile_instructions "instructions  launches  label" run "$W/add.lmb" --profile
# The kernels' instructions, unlike the times, are the same on any thread
# count.
lm run "$W/add.lmb" --profile --json --threads 1
rc1=$rc
grep '"instructions"' "$W/out" >"$W/instructions1"
lm run "$W/add.lmb" --profile --json --threads 2
grep '"instructions"' "$W/out" >"$W/instructions2"
if [ "$rc1" -eq 0 ] && [ "$rc" -eq 0 ] && [ "$(wc -l <"$W/instructions1")" -ge 2 ] &&
    ! grep -q '"instructions": 0' "$W/instructions1" && cmp -s "$W/instructions1" "$W/instructions2"; then
    pass run_profile_instructions_threads
else
    fail run_profile_instructions_threads "exit $rc1/$rc: $(cat "$W/instructions1" "$W/instructions2")"
fi
expect_error run_profile_value 2 "--profile takes no value" run "$W/add.lmb" --profile=5
lm compile -q "$D/test_add/model.onnx" -o "$W/add_trace.lmb" --trace
expect_ok run_profile_trace "1  trace 1" run "$W/add_trace.lmb" --profile
# The trace region a traced compile's device keeps, recorded for its replays.
lm compile -q "$D/test_add/model.onnx" -o "$W/add_r.lmb" --trace --trace-region 32
expect_ok trace_region "trace region 33554432 bytes" info "$W/add_r.lmb"
expect_error trace_region_needs_trace 2 "--trace-region sizes the trace of --trace: give --trace too" \
    compile "$D/test_add/model.onnx" -o "$W/x.lmb" --trace-region 32
expect_error trace_region_zero 2 "--trace-region: '0' is not an integer in [1, 512]" \
    compile "$D/test_add/model.onnx" -o "$W/x.lmb" --trace --trace-region 0
expect_error trace_region_word 2 "--trace-region: 'big' is not an integer in [1, 512]" \
    compile "$D/test_add/model.onnx" -o "$W/x.lmb" --trace --trace-region big
expect_ok run_profile_trace_hint "a metal trace is timed as one launch" run "$W/add_trace.lmb" --profile
lm run "$W/add.lmb" --json
if [ "$rc" -eq 0 ] && ! grep -q '"profile"' "$W/out"; then
    pass run_no_profile_json
else
    fail run_no_profile_json "exit $rc: $(cat "$W/out")"
fi
lm compile -q "$D/test_add/model.onnx" -o "$W/add_q.lmb"
if [ "$rc" -ne 0 ] || [ -s "$W/out" ] || [ -s "$W/err" ]; then
    fail quiet "exit $rc, printed: $(cat "$W/out" "$W/err")"
else
    pass quiet
fi

# int64 in, int64 out: the boundary converts.
if /usr/bin/python3 -c "import numpy" 2>/dev/null; then
    expect_ok compile_int "1 nodes" compile "$D/test_mod_mixed_sign_int64/model.onnx" -o "$W/mod.lmb"
    /usr/bin/python3 -c "
import numpy as np
np.save('$W/x.npy', np.array([-4, 7, 5, 4, -7, 8], dtype=np.int64))
np.save('$W/y.npy', np.array([2, -3, 8, -2, 3, 5], dtype=np.int64))"
    expect_ok run_int "goldens" run "$W/mod.lmb" --input x="$W/x.npy" --input y="$W/y.npy" \
        --output z="$W/z.npy"
    if /usr/bin/python3 -c "
import numpy as np, sys
z = np.load('$W/z.npy')
sys.exit(0 if z.dtype == np.int64 and list(z) == [0, -2, 5, 0, 2, 3] else 1)"; then
        pass run_int_values
    else
        fail run_int_values "z.npy is not int64 [0, -2, 5, 0, 2, 3]"
    fi
    /usr/bin/python3 -c "
import numpy as np
np.save('$W/big.npy', np.array([1 << 40, 7, 5, 4, -7, 8], dtype=np.int64))"
    expect_error golden_needs_name 2 "--golden FILE without NAME= needs a model with one input" \
        compile "$D/test_mod_mixed_sign_int64/model.onnx" -o "$W/x.lmb" --golden "$W/x.npy"
    expect_error run_int_range 2 "element 0 is 1099511627776" \
        run "$W/mod.lmb" --input x="$W/big.npy" --input y="$W/y.npy"

    # Scalars (rank 0) in and out: shape () in the binary and in the files.
    expect_ok compile_det "1 nodes" compile "$D/test_det_2d/model.onnx" -o "$W/det.lmb"
    expect_ok info_scalar "Output               4 bytes  Float32, shape ()" info "$W/det.lmb"
    /usr/bin/python3 -c "
import numpy as np
np.save('$W/m.npy', np.array([[1, 2], [3, 5]], dtype=np.float32))
np.save('$W/lo.npy', np.float32(-1.5))
np.save('$W/hi.npy', np.array([1.5], dtype=np.float32))
np.save('$W/two.npy', np.array([1, 2], dtype=np.float32))
np.save('$W/cx.npy', np.linspace(-3, 3, 60, dtype=np.float32).reshape(3, 4, 5))"
    expect_ok run_scalar_out "y -> " run "$W/det.lmb" --input x="$W/m.npy" --output y="$W/det.npy"
    if /usr/bin/python3 -c "
import numpy as np, sys
y = np.load('$W/det.npy')
sys.exit(0 if y.shape == () and abs(float(y) + 1) < 1e-4 else 1)"; then
        pass run_scalar_value
    else
        fail run_scalar_value "det.npy is not the scalar -1"
    fi
    expect_ok compile_clip "1 nodes" compile "$D/test_clip/model.onnx" -o "$W/clip.lmb"
    expect_ok run_scalar_in "saved" run "$W/clip.lmb" --input x="$W/cx.npy" \
        --input min="$W/lo.npy" --input max="$W/hi.npy" --output y="$W/clip.npy"
    if /usr/bin/python3 -c "
import numpy as np, sys
y = np.load('$W/clip.npy')
sys.exit(0 if y.min() == -1.5 and y.max() == 1.5 and y.shape == (3, 4, 5) else 1)"; then
        pass run_scalar_in_values
    else
        fail run_scalar_in_values "clip.npy is not clipped to [-1.5, 1.5]"
    fi
    expect_error run_scalar_shape 2 "--input min: $W/two.npy has shape (2,), buffer 'min' takes Float32 ('<f4') of shape ()" \
        run "$W/clip.lmb" --input min="$W/two.npy"
fi

# A run seed: training-mode dropout draws new numbers for each value of
# the seed input, and the same ones for the same value.
T=$D/test_training_dropout
if [ -f "$T/model.onnx" ]; then
    expect_ok seed_input "new ones for each value of the input 's'" \
        compile "$T/model.onnx" -o "$W/drop.lmb" --const r="$T/test_data_set_0/input_1.pb" \
        --const t="$T/test_data_set_0/input_2.pb" --golden x="$T/test_data_set_0/input_0.pb" \
        --seed-input s=5
    expect_ok seed_input_info "UInt32, shape ()" info "$W/drop.lmb"
    printf '\001\000\000\000' >"$W/s1.bin"
    printf '\002\000\000\000' >"$W/s2.bin"
    for run in 1 2 1b; do
        lm run "$W/drop.lmb" --no-goldens --input s="$W/s${run%b}.bin" --output y="$W/y$run.bin"
        [ "$rc" -eq 0 ] || fail "seed_run_$run" "exit $rc: $(cat "$W/err")"
    done
    if cmp -s "$W/y1.bin" "$W/y1b.bin" && ! cmp -s "$W/y1.bin" "$W/y2.bin"; then
        pass seed_runs
    else
        fail seed_runs "seed 1 twice should match and seed 2 differ"
    fi
    expect_error seed_input_clash 2 "opts->seed_input: 'x' is already one of the model's inputs" \
        compile "$T/model.onnx" -o "$W/x.lmb" --const r="$T/test_data_set_0/input_1.pb" \
        --const t="$T/test_data_set_0/input_2.pb" --seed-input x
fi
expect_error seed_input_value 2 "--seed-input" compile "$D/test_add/model.onnx" -o "$W/x.lmb" \
    --seed-input s=4294967296
expect_error seed_input_nothing 2 "the model draws no random numbers, so 's' would change nothing" \
    compile "$D/test_add/model.onnx" -o "$W/x.lmb" --seed-input s

expect_error no_model 2 "missing MODEL" compile -o "$W/x.lmb"
expect_error no_output 2 "missing -o FILE" compile "$D/test_add/model.onnx"
expect_error bad_dtype 2 "--dtype: expected fp32, bf16 or bfp8, given 'fp64'" \
    compile "$D/test_add/model.onnx" -o "$W/x.lmb" --dtype fp64
expect_error bad_shape 2 "--input-shape: '1x-2' is not a shape like 1x3x224x224 (dims 0..2^40)" \
    compile "$D/test_add/model.onnx" -o "$W/x.lmb" --input-shape x=1x-2
expect_error bad_dim_value 2 "--dim: '-1' is not an integer in [0, 1099511627776]" \
    compile "$D/test_add/model.onnx" -o "$W/x.lmb" --dim batch=-1
expect_error bad_binding 2 "--dim: 'batch' is not NAME=VALUE" \
    compile "$D/test_add/model.onnx" -o "$W/x.lmb" --dim batch
expect_error unknown_input 2 "the model has no input 'q' (its inputs: 'x', 'y')" \
    compile "$D/test_add/model.onnx" -o "$W/x.lmb" --input-shape q=3x4x5
expect_error fixed_dim 2 "the model fixes dim 0 of float[3, 4, 5] to 3, given 2" \
    compile "$D/test_add/model.onnx" -o "$W/x.lmb" --input-shape x=2x4x5
expect_error unknown_flag 2 "--frobnicate" compile "$D/test_add/model.onnx" -o "$W/x.lmb" --frobnicate
# A .pb tensor names its input itself; a .npy needs NAME= when there are several.
expect_ok golden_pb "1 nodes" compile "$D/test_add/model.onnx" -o "$W/g.lmb" \
    --golden "$D/test_add/test_data_set_0/input_0.pb" --golden "$D/test_add/test_data_set_0/input_1.pb"
expect_ok golden_checked "goldens" run "$W/g.lmb"
expect_error const_missing 2 "must be known at compile time: give it as a constant (--const shape=FILE)" \
    compile "$D/test_reshape_reordered_all_dims/model.onnx" -o "$W/x.lmb"
expect_ok const_pb "1 nodes" compile "$D/test_reshape_reordered_all_dims/model.onnx" -o "$W/r.lmb" \
    --const shape="$D/test_reshape_reordered_all_dims/test_data_set_0/input_1.pb"
expect_error unsupported_op 2 "node #0 (StringNormalizer): op StringNormalizer is not supported" \
    compile "$D/test_strnormalizer_nostopwords_nochangecase/model.onnx" -o "$W/x.lmb"
N="$D/test_nonmaxsuppression_suppress_by_IOU"
NC="--const max_output_boxes_per_class=$N/test_data_set_0/input_2.pb --const iou_threshold=$N/test_data_set_0/input_3.pb --const score_threshold=$N/test_data_set_0/input_4.pb"
expect_ok info_pad_dynamic "input  boxes                float[1, 6, 4]  (decides output sizes: compile with --pad-dynamic, or give it with --const)" \
    compile "$N/model.onnx" --info
expect_ok info_pad_dynamic_const "max_output_boxes_per_class int64[1]  (decides shapes: give it with --const)" \
    compile "$N/model.onnx" --info
expect_error nms_needs_values 2 "input 2 ('max_output_boxes_per_class') decides the output shape, so its value must be known at compile time: give it as a constant (--const max_output_boxes_per_class=FILE)" \
    compile "$N/model.onnx" -o "$W/x.lmb"
# shellcheck disable=SC2086 # NC is three options
expect_error nms_runtime_boxes 2 "input 0 ('boxes') is known only at run time, and with it how many boxes are selected: compile with --pad-dynamic (options: pad_dynamic) for an output of the most rows the op can select, the unused ones -1, or give it with --const boxes=FILE" \
    compile "$N/model.onnx" -o "$W/x.lmb" $NC
# shellcheck disable=SC2086
expect_ok nms_pad_dynamic "NonMaxSuppression             1  device" compile "$N/model.onnx" -o "$W/nms.lmb" $NC --pad-dynamic \
    --golden boxes="$N/test_data_set_0/input_0.pb" --golden scores="$N/test_data_set_0/input_1.pb"
expect_ok nms_padded_shape "selected_indices" info "$W/nms.lmb"
expect_ok nms_padded_run "goldens" run "$W/nms.lmb"
expect_error pad_dynamic_value 2 "--pad-dynamic" compile "$N/model.onnx" -o "$W/x.lmb" --pad-dynamic=1
expect_ok float64_note "float64: 1 device node computes float64 values in float32 (about 7 significant digits; magnitudes beyond 3.4e38 become infinities)" \
    compile "$3/pytorch-operator/test_operator_add_broadcast/model.onnx" -o "$W/f64.lmb"
Z="$D/test_nonzero_example"
expect_ok info_nonzero "(decides output sizes: compile with --pad-dynamic, or give it with --const)" \
    compile "$Z/model.onnx" --info
expect_error nonzero_runtime 2 "input 0 ('condition') is known only at run time, and with it how many elements are nonzero: compile with --pad-dynamic (options: pad_dynamic) for an output of a column per element, the unused ones -1, or give it with --const condition=FILE" \
    compile "$Z/model.onnx" -o "$W/x.lmb"
expect_ok nonzero_pad_dynamic "ScatterND" compile "$Z/model.onnx" -o "$W/nz.lmb" --pad-dynamic \
    --golden condition="$Z/test_data_set_0/input_0.pb"
expect_ok nonzero_padded_shape "Int64 stored as Int32, shape (2, 4)" info "$W/nz.lmb"
expect_ok nonzero_padded_run "goldens" run "$W/nz.lmb"
printf 'not a model' >"$W/bad.onnx"
expect_error bad_file 2 "bad.onnx" compile "$W/bad.onnx" -o "$W/x.lmb"
expect_error missing_file 2 "nope.onnx" compile "$W/nope.onnx" -o "$W/x.lmb"
[ -e "$W/x.lmb" ] && fail no_partial_output "x.lmb was written by a failed compile" || pass no_partial_output

check_summary
