"""Chats with a running `tessera serve` through the official OpenAI client.

    .venv/bin/python examples/openai_client.py            # after scripts/venv.sh
    .venv/bin/python examples/openai_client.py --stream

Any model name is accepted by a one-model server; the key is only checked
when the server was started with --api-key.
"""
import argparse

from openai import OpenAI


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base-url", default="http://127.0.0.1:8080/v1")
    ap.add_argument("--stream", action="store_true")
    args = ap.parse_args()
    client = OpenAI(base_url=args.base_url, api_key="not-needed")
    messages = [{"role": "user", "content": "Name three colours of the rainbow."}]
    model = client.models.list().data[0].id
    if args.stream:
        for chunk in client.chat.completions.create(model=model, messages=messages, max_tokens=64, stream=True):
            if chunk.choices and chunk.choices[0].delta.content:
                print(chunk.choices[0].delta.content, end="", flush=True)
        print()
    else:
        reply = client.chat.completions.create(model=model, messages=messages, max_tokens=64)
        print(reply.choices[0].message.content)


if __name__ == "__main__":
    main()
